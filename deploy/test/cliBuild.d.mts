/** Compiles the CLI into a new directory under .reports/ and answers its path (deploy/test/cliBuild.mjs). */
export declare const buildCli: () => Promise<string>;
export declare const removeCliBuild: (dir: string) => void;
