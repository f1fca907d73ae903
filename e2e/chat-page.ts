/** What the chat specs do on the chat page: start a conversation with some sampling fields set, and send a message. */
import type { Page } from '@playwright/test';

/** New chat, then each `fields` label (System prompt and sampling: "Seed", "Max tokens", …) filled with its value and left. */
export async function newChat(page: Page, fields: Readonly<Record<string, string>>): Promise<void> {
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.getByText('System prompt and sampling').click();
  for (const [label, value] of Object.entries(fields)) {
    await page.getByLabel(label).fill(value);
    await page.getByLabel(label).blur();
  }
}

/** Types `text` in the message box and sends it (Enter). */
export async function sendMessage(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'message', exact: true });
  await box.fill(text);
  await box.press('Enter');
}
