// Every workflow the workers run. Deterministic code only: see eslint.config.js.
export {};
