// Discovery: the envelope every node answers `__describe()` with. Part of the contract of record (types.ts).

/** The envelope every node answers `__describe()` with; nodes add their own fields beside these. */
export interface Description {
  /** What kind of node this is: "unauthenticated", "session", "itx", ... */
  kind: string;
  /** Prose for whoever holds this node: what it is and how to use it. */
  instructions: string;
  /** One line per member, the map of what can be reached from here. */
  children: Record<string, string>;
  /** Where this node sits, when it has a parent. */
  parent?: string;
  /** TypeScript source describing the node, when it has one. */
  types?: string;
}
