import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import (from src/shared or src/log, at any depth) of the server's own folders and files. */
const SERVER_MODULES =
  '^(\\.\\./)+(capture|answers|request|store|bus|http|socket|cli|endpoints|access|log|redis|one-process)(/|\\.js)|^(\\.\\./)+(app|main|config|errors|metrics)\\.js$';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'client/dist/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        document: 'readonly',
        window: 'readonly',
        location: 'readonly',
        WebSocket: 'readonly',
        navigator: 'readonly',
        localStorage: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'exit', message: 'Only src/main.ts exits the process.' },
        // On Node 20 a garbage collection can take AbortSignal.timeout's signal from under AbortSignal.any, which then never aborts (nodejs/node#57736).
        {
          object: 'AbortSignal',
          property: 'timeout',
          message: 'Use deadline() from src/shared/deadline.ts: a timer the code holds and clears.',
        },
        {
          object: 'AbortSignal',
          property: 'any',
          message: 'Use deadline() from src/shared/deadline.ts: a timer the code holds and clears.',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "AssignmentExpression[left.property.name='innerHTML']",
          message: 'Never innerHTML: captured data is rendered as text only.',
        },
      ],
    },
  },
  // What the page and the CLI share with the server runs in a browser too: no Node built-ins, and
  // nothing from the server's own folders.
  {
    files: ['src/shared/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^node:', message: 'src/shared runs in browsers: no Node built-ins.' },
            { regex: SERVER_MODULES, message: 'src/shared imports only src/shared.' },
          ],
        },
      ],
    },
  },
  {
    files: ['client/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^node:', message: 'The page runs in browsers: no Node built-ins.' },
            { regex: '^(\\.\\./)+src/(?!shared/)', message: "The page imports only src/shared of the server's code." },
          ],
        },
      ],
    },
  },
  // The CLI is a program of its own, talking to the server over HTTP and the socket only: besides
  // Node and its own modules it imports what the page does, src/shared.
  {
    files: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!shared/)',
              message:
                'src/cli imports only src/shared (and its own modules): it is a client of the server, not part of it.',
            },
          ],
        },
      ],
    },
  },
  // The request log's rulebook is pure: no Node built-ins, no backend, no transport; it knows src/shared only.
  {
    files: ['src/log/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^node:', message: 'src/log is pure: no Node built-ins.' },
            {
              regex: SERVER_MODULES,
              message: 'src/log imports only src/shared: backends follow it, not the other way round.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'setImmediate', 'fetch', 'Date', 'performance'],
    },
  },
  // Programs of their own (the entry point, benchmark processes) may exit.
  {
    files: ['src/main.ts', 'bench/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'AbortSignal', property: 'timeout' },
        { object: 'AbortSignal', property: 'any' },
      ],
    },
  },
);
