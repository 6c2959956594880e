import type { ConfigReader } from "../../src/settings";

/** A configuration where `values` were set by the person (user level), the rest defaults. */
export function fakeConfig(values: Record<string, unknown> = {}, workspace: Record<string, unknown> = {}): ConfigReader {
  return {
    get<T>(key: string, defaultValue: T): T {
      if (key in workspace) return workspace[key] as T;
      if (key in values) return values[key] as T;
      return defaultValue;
    },
    inspect<T>(key: string) {
      return {
        globalValue: values[key] as T | undefined,
        workspaceValue: workspace[key] as T | undefined,
      };
    },
  };
}
