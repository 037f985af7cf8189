#!/usr/bin/env node
// The passk command. Sources are TypeScript, run through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
