// How the server process is started and what the language client is told.

export interface ServerCommand {
  command: string;
  args: string[];
  options: { env: NodeJS.ProcessEnv; cwd?: string };
}

/** `python -m codesift.cli serve`: works whether or not the `codesift` script is on PATH. */
export function serverCommand(python: string, env: NodeJS.ProcessEnv, cwd?: string): ServerCommand {
  return {
    command: python,
    args: ["-m", "codesift.cli", "serve"],
    options: {
      // No model downloads, ever: the server assembles its model from installed files.
      env: { ...env, HF_HUB_OFFLINE: "1", PYTHONUNBUFFERED: "1" },
      ...(cwd ? { cwd } : {}),
    },
  };
}

/** codesift indexes every file of the workspace folders, so it serves every file document. */
export const DOCUMENT_SELECTOR = [{ scheme: "file" }];
