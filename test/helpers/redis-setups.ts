import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './instances.js';

export interface RedisAddress {
  host: string;
  port: number;
}

export interface SentinelSetOptions {
  /** The name sentinel monitors the primary under (default `hookwatch`). */
  name?: string;
  /** Sentinel's `down-after-milliseconds` (default 1000). */
  downAfterMs?: number;
  /** Sentinel's `failover-timeout` (default 5000). */
  failoverTimeoutMs?: number;
}

/** A primary, one replica and one sentinel (quorum 1), each its own redis-server on 127.0.0.1. */
export interface SentinelSet {
  name: string;
  /** What an ioredis client takes as `sentinels`. */
  sentinels: RedisAddress[];
  /** Both data nodes, in start order (the first started as primary); roles change on failover. */
  nodes: RedisAddress[];
  /** The primary as the sentinel reports it now (SENTINEL get-master-addr-by-name). */
  primary(): Promise<RedisAddress>;
  /**
   * Waits for the sentinel to see a replica in sync, sends SENTINEL FAILOVER, then waits until
   * the sentinel names another primary and that node answers ROLE as master. Resolves with the
   * new primary. The old primary still runs as a master for a while after that: the sentinel
   * demotes it (REPLICAOF, killing its clients) only some seconds later, see the test file.
   */
  failover(): Promise<RedisAddress>;
  /** Kills all three processes and removes their directories. */
  stop(): Promise<void>;
}

/** Masters of a Redis Cluster without replicas, each its own redis-server on 127.0.0.1. */
export interface ClusterSet {
  nodes: RedisAddress[];
  /** The index in `nodes` of the node every node agrees owns `slot`; throws if they disagree. */
  slotOwner(slot: number): Promise<number>;
  /**
   * Moves `slot` to `nodes[toNodeIndex]` while clients keep working: IMPORTING on the target,
   * MIGRATING on the source, MIGRATE of its keys `batchSize` at a time (clients meanwhile get
   * ASK for keys already moved), then SETSLOT NODE on target, source and the rest. Resolves once
   * every node reports the new owner. Moving a slot to its owner does nothing. `first`: keys
   * moved before any other, one call, then `midway` runs while the slot is half moved.
   */
  reshard(
    slot: number,
    toNodeIndex: number,
    options?: { batchSize?: number; first?: string[]; midway?: () => Promise<unknown> },
  ): Promise<void>;
  /** Kills every node and removes their directory. */
  stop(): Promise<void>;
}

const host = '127.0.0.1';
const startTimeoutMs = 10_000;
const topologyTimeoutMs = 20_000;
/** Each process is disposable: no RDB snapshots, no AOF. */
const noPersistence = ['--save', '', '--appendonly', 'no'];

interface RedisProcess {
  address: RedisAddress;
  /** What it printed (its log), for errors. */
  output(): string;
  kill(): Promise<void>;
}

/** Resolves when `check()` returns a value other than undefined; throws naming `what` after `timeoutMs`. */
async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = topologyTimeoutMs,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sends one command on a connection of its own, so a node's role change cannot leave it stale. */
async function command(address: RedisAddress, ...args: Array<string | number>): Promise<unknown> {
  const client = new Redis({
    ...address,
    protocol: 2,
    lazyConnect: true,
    enableReadyCheck: false,
    disableClientInfo: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const [name, ...rest] = args;
    return await client.call(String(name), ...rest);
  } finally {
    client.disconnect();
  }
}

/** `INFO`/`CLUSTER INFO` text as fields. */
function parseInfo(text: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of String(text).split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** A RESP2 flat `[key, value, ...]` array (SENTINEL REPLICAS entries) as a map. */
function parsePairs(reply: unknown): Map<string, string> {
  const pairs = new Map<string, string>();
  if (!Array.isArray(reply)) return pairs;
  for (let i = 0; i + 1 < reply.length; i += 2) pairs.set(String(reply[i]), String(reply[i + 1]));
  return pairs;
}

function sameAddress(a: RedisAddress, b: RedisAddress): boolean {
  return a.host === b.host && a.port === b.port;
}

/** Distinct free ports (freePort() may hand the same one out twice in a row). */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** Starts `redis-server args` and resolves once it answers PING. */
async function spawnRedis(port: number, args: string[]): Promise<RedisProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.on('error', (error) => keep(Buffer.from(String(error))));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const address = { host, port };
  try {
    await waitUntil(
      `redis-server on port ${port} to answer PING`,
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited:\n${output}`);
        return (await command(address, 'PING')) === 'PONG' ? true : undefined;
      },
      startTimeoutMs,
    );
  } catch (error) {
    await kill();
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  }
  return { address, output: () => output, kill };
}

/** Stops what started, then removes the directory; used by stop() and by a failed start. */
async function teardown(processes: RedisProcess[], dir: string): Promise<void> {
  await Promise.all(processes.map((node) => node.kill()));
  await rm(dir, { recursive: true, force: true });
}

/**
 * Starts a primary, a replica of it and a sentinel monitoring it (quorum 1), and resolves once
 * the replica's link is up and the sentinel knows both (so a failover can pick the replica).
 */
export async function startSentinelSet(options: SentinelSetOptions = {}): Promise<SentinelSet> {
  const name = options.name ?? 'hookwatch';
  const dir = await mkdtemp(join(tmpdir(), 'hookwatch-sentinel-'));
  const processes: RedisProcess[] = [];
  try {
    const [primaryPort = 0, replicaPort = 0, sentinelPort = 0] = await freePorts(3);
    // Separate directories: a replica writes the RDB of a full sync to its `dir`.
    const serverArgs = async (port: number): Promise<string[]> => {
      const own = join(dir, `node-${port}`);
      await mkdir(own);
      // The default 5 s diskless-sync delay (waiting for more replicas) would hold up every sync.
      return [
        '--port',
        String(port),
        '--bind',
        host,
        '--dir',
        own,
        '--repl-diskless-sync-delay',
        '0',
        ...noPersistence,
      ];
    };
    processes.push(await spawnRedis(primaryPort, await serverArgs(primaryPort)));
    processes.push(
      await spawnRedis(replicaPort, [...(await serverArgs(replicaPort)), '--replicaof', host, String(primaryPort)]),
    );
    const replica = { host, port: replicaPort };
    await waitUntil('the replica to sync', async () =>
      parseInfo(await command(replica, 'INFO', 'replication')).get('master_link_status') === 'up' ? true : undefined,
    );

    // Sentinel rewrites its config file (known replicas, epochs), so it gets a writable copy.
    const sentinelDir = join(dir, `sentinel-${sentinelPort}`);
    await mkdir(sentinelDir);
    const configPath = join(sentinelDir, 'sentinel.conf');
    await writeFile(
      configPath,
      [
        `port ${sentinelPort}`,
        `bind ${host}`,
        `dir ${sentinelDir}`,
        `sentinel monitor ${name} ${host} ${primaryPort} 1`,
        `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${name} ${options.failoverTimeoutMs ?? 5000}`,
        '',
      ].join('\n'),
    );
    processes.push(await spawnRedis(sentinelPort, [configPath, '--sentinel', ...noPersistence]));
    const sentinel = { host, port: sentinelPort };

    const primary = async (): Promise<RedisAddress> => {
      const reply = await command(sentinel, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
      if (!Array.isArray(reply) || reply.length !== 2) throw new Error(`sentinel knows no primary named ${name}`);
      return { host: String(reply[0]), port: Number(reply[1]) };
    };
    /** A replica the sentinel would promote: known, not down, its link to the primary up. */
    const syncedReplica = async (): Promise<RedisAddress | undefined> => {
      const replicas = await command(sentinel, 'SENTINEL', 'REPLICAS', name);
      if (!Array.isArray(replicas)) return undefined;
      for (const entry of replicas.map(parsePairs)) {
        const flags = (entry.get('flags') ?? '').split(',');
        if (flags.some((flag) => flag.endsWith('_down') || flag === 'disconnected')) continue;
        if (entry.get('master-link-status') !== 'ok') continue;
        return { host: entry.get('ip') ?? host, port: Number(entry.get('port')) };
      }
      return undefined;
    };

    await waitUntil('the sentinel to report the primary', async () =>
      sameAddress(await primary(), { host, port: primaryPort }) ? true : undefined,
    );
    await waitUntil('the sentinel to know the replica in sync', syncedReplica);

    return {
      name,
      sentinels: [sentinel],
      nodes: [
        { host, port: primaryPort },
        { host, port: replicaPort },
      ],
      primary,
      async failover() {
        const before = await primary();
        await waitUntil('a replica in sync to fail over to', syncedReplica);
        // NOGOODSLAVE while the sentinel's view of the replica is stale, INPROG while an
        // earlier failover finishes: both pass, so they are retried until the deadline.
        await waitUntil('SENTINEL FAILOVER to be accepted', async () => {
          try {
            return await command(sentinel, 'SENTINEL', 'FAILOVER', name);
          } catch (error) {
            if (/NOGOODSLAVE|INPROG/.test((error as Error).message)) return undefined;
            throw error;
          }
        });
        const after = await waitUntil('the sentinel to name a new primary', async () => {
          const current = await primary();
          return sameAddress(current, before) ? undefined : current;
        });
        await waitUntil('the new primary to answer ROLE as master', async () => {
          const role = await command(after, 'ROLE');
          return Array.isArray(role) && role[0] === 'master' ? true : undefined;
        });
        return after;
      },
      stop: () => teardown(processes, dir),
    };
  } catch (error) {
    await teardown(processes, dir);
    throw error;
  }
}

/**
 * Starts `masters` cluster-enabled redis-servers (at least 3, as `redis-cli --cluster create`
 * requires), joins them with the slots split evenly and no replicas, and resolves once every
 * node says cluster_state:ok and all agree on who owns every slot.
 */
export async function startCluster(masters = 3): Promise<ClusterSet> {
  if (masters < 3) throw new Error('redis-cli --cluster create needs at least 3 masters');
  const dir = await mkdtemp(join(tmpdir(), 'hookwatch-cluster-'));
  const processes: RedisProcess[] = [];
  try {
    // Two ports each: the cluster bus defaults to port + 10000, which overflows for ephemeral ports.
    const ports = await freePorts(masters * 2);
    const nodePorts = ports.slice(0, masters);
    const busPorts = ports.slice(masters);
    const starting = await Promise.allSettled(
      nodePorts.map((port, index) =>
        spawnRedis(port, [
          '--port',
          String(port),
          '--bind',
          host,
          '--dir',
          dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '2000',
          '--cluster-port',
          String(busPorts[index]),
          ...noPersistence,
        ]),
      ),
    );
    for (const result of starting) if (result.status === 'fulfilled') processes.push(result.value);
    const failed = starting.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const nodes = processes.map((node) => node.address);
    await promisify(execFile)(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((node) => `${node.host}:${node.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: topologyTimeoutMs },
    );
    const ids = await Promise.all(nodes.map(async (node) => String(await command(node, 'CLUSTER', 'MYID'))));

    /** The owner of `slot` in `node`'s view, as an index into `nodes`. */
    const ownerSeenBy = async (node: RedisAddress, slot: number): Promise<number | undefined> => {
      const ranges = await command(node, 'CLUSTER', 'SLOTS');
      if (!Array.isArray(ranges)) return undefined;
      for (const range of ranges) {
        if (!Array.isArray(range)) continue;
        const [start, end, owner] = range as [number, number, unknown[]];
        if (slot < start || slot > end) continue;
        const index = ids.indexOf(String(owner[2]));
        return index === -1 ? undefined : index;
      }
      return undefined;
    };
    const agreedOwner = async (slot: number): Promise<number | undefined> => {
      const views = await Promise.all(nodes.map((node) => ownerSeenBy(node, slot)));
      return views.every((view) => view !== undefined && view === views[0]) ? views[0] : undefined;
    };
    const slotOwner = async (slot: number): Promise<number> => {
      const owner = await agreedOwner(slot);
      if (owner === undefined) throw new Error(`the nodes disagree on the owner of slot ${slot}`);
      return owner;
    };

    await waitUntil('cluster_state:ok on every node', async () => {
      const states = await Promise.all(
        nodes.map(async (node) => parseInfo(await command(node, 'CLUSTER', 'INFO')).get('cluster_state')),
      );
      return states.every((state) => state === 'ok') ? true : undefined;
    });
    // Ownership of the first and last slot of each node's range, as every node sees it.
    const probes = nodes.map((_, index) => Math.floor((16384 * index) / masters));
    await waitUntil('every node to agree on the slot owners', async () => {
      const owners = await Promise.all([...probes, 16383].map(agreedOwner));
      return owners.every((owner) => owner !== undefined) ? true : undefined;
    });

    return {
      nodes,
      slotOwner,
      async reshard(slot, toNodeIndex, { batchSize = 10, first, midway } = {}) {
        const to = nodes[toNodeIndex];
        const toId = ids[toNodeIndex];
        if (to === undefined || toId === undefined) throw new Error(`no node ${toNodeIndex}`);
        const fromIndex = await slotOwner(slot);
        if (fromIndex === toNodeIndex) return;
        const from = nodes[fromIndex] as RedisAddress;
        const fromId = ids[fromIndex] as string;
        // Target first: once the source is MIGRATING it sends ASK for missing keys, and the
        // target must already accept them (ASKING) rather than answer MOVED back.
        await command(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
        await command(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
        if (first !== undefined) {
          await command(from, 'MIGRATE', to.host, to.port, '', 0, 5000, 'KEYS', ...first);
          await midway?.();
        }
        for (;;) {
          const keys = await command(from, 'CLUSTER', 'GETKEYSINSLOT', slot, batchSize);
          if (!Array.isArray(keys) || keys.length === 0) break;
          // A migrating source creates no new keys in the slot (it redirects with ASK), so
          // this empties it. Without REPLACE, a key on both sides fails loudly (BUSYKEY).
          await command(from, 'MIGRATE', to.host, to.port, '', 0, 5000, 'KEYS', ...keys.map(String));
        }
        // Target first, so it owns the slot (and bumps its epoch) before the source stops
        // redirecting with ASK and starts answering MOVED.
        await command(to, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
        await command(from, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
        await Promise.all(
          nodes
            .filter((_, index) => index !== fromIndex && index !== toNodeIndex)
            .map((node) => command(node, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId)),
        );
        await waitUntil(`every node to see slot ${slot} on node ${toNodeIndex}`, async () =>
          (await agreedOwner(slot)) === toNodeIndex ? true : undefined,
        );
      },
      stop: () => teardown(processes, dir),
    };
  } catch (error) {
    await teardown(processes, dir);
    throw error;
  }
}
