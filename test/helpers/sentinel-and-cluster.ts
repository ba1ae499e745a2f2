import { Cluster, Redis } from 'ioredis';
import { startCluster, startSentinelSet, type ClusterSet, type SentinelSet } from './redis-setups.js';

/**
 * The Redis setups the contract and multi-instance suites run on besides one Redis: a
 * Sentinel set (a primary, a replica, a sentinel) and a 3-master Cluster, each started once per
 * test file that asks, on loopback ports of their own.
 */
export interface Topologies {
  sentinel: SentinelSet;
  cluster: ClusterSet;
  /** A command or subscriber connection to the Sentinel-managed primary, as main.ts makes one. */
  sentinelClient(): Redis;
  /** The same on the Cluster; `subscriber` for sharded subscriptions. */
  clusterClient(subscriber?: boolean): Cluster;
  /** Closes every client made here and stops both setups. */
  stop(): Promise<void>;
}

export async function startTopologies(): Promise<Topologies> {
  const [sentinel, cluster] = await Promise.all([startSentinelSet(), startCluster(3)]);
  const clients: Array<Redis | Cluster> = [];
  const track = <T extends Redis | Cluster>(client: T): T => {
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  return {
    sentinel,
    cluster,
    sentinelClient: () =>
      track(
        new Redis({
          sentinels: sentinel.sentinels,
          name: sentinel.name,
          failoverDetector: true,
          maxRetriesPerRequest: 1,
        }),
      ),
    clusterClient: (subscriber = false) =>
      track(new Cluster(cluster.nodes, { shardedSubscribers: subscriber, redisOptions: { maxRetriesPerRequest: 1 } })),
    stop: async () => {
      await Promise.allSettled(clients.map((client) => client.quit()));
      await Promise.all([sentinel.stop(), cluster.stop()]);
    },
  };
}

/** `host:port,host:port`, as REDIS_SENTINELS and REDIS_CLUSTER_NODES take them. */
export const hostPorts = (nodes: Array<{ host: string; port: number }>): string =>
  nodes.map(({ host, port }) => `${host}:${port}`).join(',');
