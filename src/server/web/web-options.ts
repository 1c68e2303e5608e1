/**
 * What the web port serves besides the RPCs. Apart from the web server so that the package's
 * public types do not reach Connect's (which assume the DOM's fetch types).
 */
export interface WebOptions {
  /** Origins allowed to call cross-origin (`scheme://host[:port]`, or `*`); default none. */
  corsOrigins?: readonly string[];
  /** The folder of the web console served at `/`; default `dist/console/` of the package. */
  staticDir?: string;
}
