import { describe, expect, it } from 'vitest';
import { BacklogDepth, CLAIM_DEPTH, claimCameBackFull, claimSize, MAX_CLAIM, type ClaimDepth } from '../../src/delivery/claim-depth.js';

// How much the worker claims and how deep, alone: no database. The real schedule's claims are in claim-depth.test.ts
// and deep-claims.test.ts.
const OPTIONS = { concurrency: 64, perWebhookConcurrency: 16 };
const POSTGRES: ClaimDepth = CLAIM_DEPTH.postgres;

const ofWebhooks = (...webhookIds: number[]) => webhookIds.map((webhookId) => ({ webhookId }));
const many = (webhookId: number, count: number) => Array.from({ length: count }, () => ({ webhookId }));

describe('claim size', () => {
  it('claims up to the capacity left, and waits until half of it is free', () => {
    // PostgreSQL at depth 1: capacity 64 × 4 = 256, a claim once 128 are free, 16 of one webhook.
    expect(claimSize(OPTIONS, POSTGRES, 1, 0)).toEqual({ limit: 256, claimAt: 128, perWebhook: 16 });
    expect(claimSize(OPTIONS, POSTGRES, 1, 200)).toEqual({ limit: 56, claimAt: 128, perWebhook: 16 });
  });

  it('scales capacity, claim and shares with the depth, a claim never over MAX_CLAIM times it', () => {
    expect(claimSize(OPTIONS, POSTGRES, 4, 0)).toEqual({ limit: 1024, claimAt: 512, perWebhook: 64 });
    const wide = claimSize({ concurrency: 512, perWebhookConcurrency: 16 }, POSTGRES, 1, 0);
    expect(wide.limit).toBe(MAX_CLAIM);
    expect(wide.claimAt).toBe(MAX_CLAIM);
  });

  it('claims at least a few at once on a small worker, never more than its capacity', () => {
    expect(claimSize({ concurrency: 2, perWebhookConcurrency: 1 }, POSTGRES, 1, 0)).toEqual({ limit: 8, claimAt: 8, perWebhook: 1 });
    expect(claimSize({ concurrency: 8, perWebhookConcurrency: 1 }, POSTGRES, 1, 0).claimAt).toBe(16);
  });

  it('claims deeper on PGlite: its one session gains from fewer, larger claims', () => {
    expect(claimSize(OPTIONS, CLAIM_DEPTH.pglite, 1, 0)).toEqual({ limit: 256, claimAt: 256, perWebhook: 32 });
  });
});

describe('a claim that came back full', () => {
  it('reached its limit, or some webhook reached its share', () => {
    expect(claimCameBackFull(ofWebhooks(1, 2, 3), 3, 16)).toBe(true);
    expect(claimCameBackFull(ofWebhooks(1, 2, 3), 4, 16)).toBe(false);
    expect(claimCameBackFull([...many(1, 2), ...many(2, 1)], 10, 2)).toBe(true);
    expect(claimCameBackFull([], 10, 2)).toBe(false);
  });
});

describe('backlog depth', () => {
  const full = (limit: number) => ({ claimed: many(1, limit), limit, perWebhook: limit, someExcluded: false });
  const short = { claimed: many(1, 3), limit: 10, perWebhook: 10, someExcluded: false };

  it('goes twice as deep while claims come back full and the previous claim was sent since', () => {
    const backlog = new BacklogDepth(8);
    // The first full claim: nothing sent since a previous one, so the depth stays.
    expect(backlog.afterClaim(full(10), 1, 0)).toBe(1);
    expect(backlog.afterClaim(full(10), 1, 10)).toBe(2);
    expect(backlog.afterClaim(full(20), 2, 20)).toBe(4);
    expect(backlog.afterClaim(full(40), 4, 40)).toBe(8);
    expect(backlog.afterClaim(full(80), 8, 80)).toBe(8); // maxDepth
  });

  it('stays while the process has not yet sent the previous claim, and is back at 1 after a short claim', () => {
    const backlog = new BacklogDepth(8);
    backlog.afterClaim(full(10), 2, 0);
    expect(backlog.afterClaim(full(10), 2, 9)).toBe(2); // 9 sent of the previous 10
    expect(backlog.afterClaim(short, 2, 100)).toBe(1);
  });

  it('learns nothing from an empty claim that left lanes out', () => {
    const backlog = new BacklogDepth(8);
    backlog.afterClaim(full(10), 1, 0);
    expect(backlog.afterClaim({ claimed: [], limit: 10, perWebhook: 10, someExcluded: true }, 2, 5)).toBeUndefined();
    // The next claim compares with the full claim before, not with the empty one: 10 sent since it.
    expect(backlog.afterClaim(full(10), 1, 10)).toBe(2);
    expect(backlog.afterClaim({ claimed: [], limit: 10, perWebhook: 10, someExcluded: false }, 2, 10)).toBe(1);
  });

  it('never goes deeper than its database allows', () => {
    const backlog = new BacklogDepth(CLAIM_DEPTH.pglite.maxDepth);
    backlog.afterClaim(full(10), 1, 0);
    expect(backlog.afterClaim(full(10), 1, 10)).toBe(1);
  });
});
