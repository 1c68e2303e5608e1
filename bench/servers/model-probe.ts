/**
 * Child process: a bare node:http client of the scripted model, in a process of its own on the
 * server side of the cores (where Parkway runs), so that the model's own first byte is timed as a
 * client in Parkway's place sees it. `time` replays a request body and answers its `ModelTiming`.
 */
import { serveIpc } from "../lib/child.js";
import { timeCompletion } from "../lib/model-probe.js";

serveIpc(
  {},
  {
    time: (arg) => {
      const { url, body } = arg as { url: string; body: unknown };
      return timeCompletion(url, body);
    },
  },
);
