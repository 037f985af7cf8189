export declare const HOW_TO_GET_ONE: string;
export declare const playwrightChromium: () => string | undefined;
export declare const findChromium: (deps?: {
  env?: Record<string, string | undefined>;
  isExecutable?: (path: string) => boolean;
  playwright?: () => string | undefined;
}) => { path: string; source: string } | null;
export declare const canInstallDebianChromium: (deps?: {
  uid?: number | undefined;
  exists?: (path: string) => boolean;
}) => boolean;
export declare const installDebianChromium: () => boolean;
