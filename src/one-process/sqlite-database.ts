import { mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

/** The file under DATA_DIR. */
export const DATABASE_FILE = 'hookwatch.db';

/**
 * The schema, one migration per version: migration N takes a database at version N-1 to N.
 * Applied in order at start, each in a transaction with its version (`PRAGMA user_version`), so
 * a start that dies mid-way leaves the last whole version. Never edit a shipped migration: add one.
 */
const MIGRATIONS: string[] = [
  `CREATE TABLE endpoints (
     id TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     record TEXT NOT NULL,
     response TEXT NOT NULL,
     deadline_ms INTEGER NOT NULL,
     last_seq INTEGER NOT NULL DEFAULT 0,
     cleared_seq INTEGER NOT NULL DEFAULT 0
   ) WITHOUT ROWID;
   CREATE INDEX endpoints_by_deadline ON endpoints (deadline_ms);
   CREATE TABLE requests (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     endpoint_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     cost INTEGER NOT NULL,
     message BLOB NOT NULL
   );
   CREATE UNIQUE INDEX requests_by_endpoint ON requests (endpoint_id, seq);`,
  // The latest forward result of a request (a `forwarded` protocol message).
  `ALTER TABLE requests ADD COLUMN forwarded TEXT;`,
  // Answers each rule has given since the configuration was set: {"<rule index>": count}.
  `ALTER TABLE endpoints ADD COLUMN rule_counts TEXT NOT NULL DEFAULT '{}';`,
  // The signed-in user who created it (ACCESS_MODE token or proxy), so a user's own can be listed.
  `ALTER TABLE endpoints ADD COLUMN creator TEXT;
   CREATE INDEX endpoints_by_creator ON endpoints (creator) WHERE creator IS NOT NULL;`,
  // requests.message holds elements from here on (the answer, then the record as bytes:
  // store/stored-request.ts); rows written before hold whole v1 messages and are still read. The
  // version step makes an older release refuse the file rather than misread the new rows.
  `CREATE TABLE record_format (version INTEGER NOT NULL);
   INSERT INTO record_format (version) VALUES (2);`,
];

export class DatabaseOpenError extends Error {
  constructor(path: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const busy = /locked|busy/i.test(reason);
    super(
      busy
        ? `DATA_DIR ${path} is in use by another Hookwatch process (one process per DATA_DIR; several instances share Redis instead)`
        : `cannot open the SQLite database at ${path}: ${reason} (set DATA_DIR to a writable folder, or DATA_DIR=none to keep kept endpoints in memory only)`,
      { cause },
    );
    this.name = 'DatabaseOpenError';
  }
}

/**
 * Opens (creating when missing) the SQLite database in `dataDir`, migrated to the
 * current schema. WAL: a write is an append to the log, readers never wait for it, and a commit
 * survives a SIGKILL (SQLite replays the log at the next open). The process holds the database
 * exclusively, so a second process on the same DATA_DIR is refused at start: the store keeps
 * counts in memory that another writer would make wrong.
 */
export function openDatabase(dataDir: string): SqliteDatabase {
  const path = resolve(join(dataDir, DATABASE_FILE));
  let db: SqliteDatabase | undefined;
  try {
    mkdirSync(resolve(dataDir), { recursive: true });
    db = new Database(path, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    // A commit is durable once in the log; the log is synced at checkpoints (WAL's usual pairing).
    db.pragma('synchronous = NORMAL');
    // Takes the exclusive lock now rather than at the first write.
    db.exec('BEGIN EXCLUSIVE; COMMIT;');
    migrate(db);
    return db;
  } catch (error) {
    db?.close();
    throw new DatabaseOpenError(path, error);
  }
}

function migrate(db: SqliteDatabase): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > MIGRATIONS.length)
    throw new Error(
      `the database's schema version ${version} is newer than this Hookwatch knows (${MIGRATIONS.length}): run a newer release`,
    );
  for (let next = version + 1; next <= MIGRATIONS.length; next++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[next - 1] as string);
      db.pragma(`user_version = ${next}`);
    })();
  }
}

/** Beside the database: room set aside on the disk so that freeing can write even when the disk is full. */
export const RESERVE_FILE = 'hookwatch.reserve';
/** Enough for the log pages of deleting an endpoint's requests or a batch of expired endpoints. */
const RESERVE_BYTES = 4 * 1024 * 1024;

/**
 * Deleting needs a little disk too (SQLite writes the pages it changes to the log first), so a
 * full disk would refuse the very deletes that free it. The store keeps a reserve file beside the
 * database: when a delete, a clear or the expiry sweep finds the disk full, the reserve goes and
 * the delete runs again; the reserve comes back once there is room (`restore`, at each sweep).
 */
export interface DiskReserve {
  /** Removes the reserve file: true when there was one to free. */
  release(): boolean;
  /** Writes the reserve file again when it is missing and the disk has room for it. */
  restore(): void;
}

export function diskReserve(db: SqliteDatabase): DiskReserve {
  const path = join(dirname(db.name), RESERVE_FILE);
  const reserve: DiskReserve = {
    release() {
      if (!existsSync(path)) return false;
      rmSync(path, { force: true });
      return true;
    },
    restore() {
      if (existsSync(path)) return;
      try {
        writeFileSync(path, Buffer.alloc(RESERVE_BYTES));
      } catch {
        // No room yet: a later sweep tries again.
        rmSync(path, { force: true });
      }
    },
  };
  reserve.restore();
  return reserve;
}
