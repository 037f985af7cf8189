// What the pre-commit hook (.husky/pre-commit) checks, on the staged files only; the type check covers the project,
// since a change to one file can break another's types. CI runs the same checks on everything (.ci/run).
export default {
  '*.{ts,mts,mjs,cjs,js}': ['eslint --no-warn-ignored --max-warnings 0', 'prettier --check'],
  '*.{json,md,yml,yaml,css,html}': 'prettier --check --ignore-unknown',
  '*.{ts,mts}': () => ['tsc --noEmit', 'tsc --noEmit -p web/client'],
  'web/client/**/*.js': () => 'tsc --noEmit -p web/client',
};
