/**
 * Charts over the last two minutes: requests routed per replica; tokens per second, and running and waiting requests on an axis of their own; the
 * queue's line. Not tab stops: their numbers are in the cards and the queue line.
 */
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useMemo } from 'react';
import { useApp } from '../../store/use-app-store.js';
import { selectChartRows, selectQueueSummary } from '../../store/workstation-slice.js';

const COLOURS = ['#4fa3ff', '#ffb347', '#7bd389', '#e07be0', '#f36f6f', '#c9c95b', '#6fd6d6', '#a98bff'];

export function Charts() {
  const history = useApp((s) => s.history);
  const rows = useMemo(() => selectChartRows({ history }), [history]);
  const queue = useMemo(() => selectQueueSummary({ history }), [history]);
  const replicas = useApp((s) => s.replicas.length);
  return (
    <section className="row charts">
      <figure className="panel chart" aria-label="routed per replica">
        <figcaption>Routed per replica</figcaption>
        <ResponsiveContainer width="100%" height={180}>
          <LineChart data={rows} accessibilityLayer={false}>
            <CartesianGrid strokeDasharray="3 3" stroke="#2a3139" />
            <XAxis dataKey="t" type="number" domain={['dataMin', 0]} allowDecimals={false} unit="s" stroke="#8a96a3" />
            <YAxis allowDecimals={false} stroke="#8a96a3" />
            <Tooltip />
            <Legend />
            {Array.from({ length: replicas }, (_, i) => (
              <Line
                key={i}
                type="stepAfter"
                dataKey={`r${i}`}
                name={`replica ${i}`}
                stroke={COLOURS[i % COLOURS.length]}
                dot={false}
                isAnimationActive={false}
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </figure>
      <figure className="panel chart" aria-label="tokens per second and queue">
        <figcaption>Tokens/s and queue</figcaption>
        <ResponsiveContainer width="100%" height={180}>
          <LineChart data={rows} accessibilityLayer={false}>
            <CartesianGrid strokeDasharray="3 3" stroke="#2a3139" />
            <XAxis dataKey="t" type="number" domain={['dataMin', 0]} allowDecimals={false} unit="s" stroke="#8a96a3" />
            {/* Tokens/s on the left; requests, running and waiting, on their own axis on the right, so a short queue is not a flat line at 0. */}
            <YAxis yAxisId="tokens" stroke="#4fa3ff" label={{ value: 'tokens/s', angle: -90, position: 'insideLeft', fill: '#8a96a3', fontSize: 11 }} />
            <YAxis
              yAxisId="requests"
              orientation="right"
              allowDecimals={false}
              domain={[0, (max: number) => Math.max(4, max)]}
              stroke="#f36f6f"
              label={{ value: 'requests', angle: 90, position: 'insideRight', fill: '#8a96a3', fontSize: 11 }}
            />
            <Tooltip />
            <Legend />
            <Line yAxisId="tokens" dataKey="tokensPerSecond" name="tokens/s" stroke="#4fa3ff" dot={false} isAnimationActive={false} />
            <Line yAxisId="requests" type="stepAfter" dataKey="running" name="running" stroke="#7bd389" dot={false} isAnimationActive={false} />
            <Line yAxisId="requests" type="stepAfter" dataKey="waiting" name="waiting" stroke="#f36f6f" dot={false} isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
        <p className="queue-summary">{queue}</p>
      </figure>
    </section>
  );
}
