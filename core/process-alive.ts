/** Whether a process still runs, for the clean-ups of files a dead process left (arena files, chat temp files). */

/** Whether a process with this pid exists (EPERM: it does, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
