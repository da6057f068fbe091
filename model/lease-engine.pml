/*
 * The lease engine (lock-api: dev.latchkey.engine.ConditionalStoreLockManager over a ConditionalStore, leases
 * managed by dev.latchkey.spi.ManagedLease), as the code implements it, for spin 6.5.
 * docs/model-checking.md says what this proves, for which bounds, and what it abstracts.
 *
 * Time. One tick of the store's clock (Clock) stands for TTL/5, the safety margin; TTL is 5 ticks.
 * Everything a process does between two ticks happens "within" a tick, in the order spin picks.
 * A lease is valid for TTL - margin = 4 ticks of its client's local monotonic clock
 * (TimeSource.nanoTime) after the send of its last landed write. A local clock may run slower than
 * the store's by up to 1/DRIFT (DRIFT 5: 20 %, exactly the margin): 4 local ticks then last up to
 * VAL = ceil(4 * DRIFT / (DRIFT - 1)) = 5 store ticks. Every local countdown (validity, the
 * validity a request in flight would give, the withdrawal window) runs at that slowest rate: a
 * faster clock only ends each local window sooner, so the slowest clock is the worst case for
 * mutual exclusion (an argument, not something spin checks). Local deadlines are countdowns, so
 * the state space stays finite.
 *
 * The store (ConditionalStore): one record (LeaseRecord: held, lease id, revision, token) and
 * its age by the store's clock (StoredRecord.age, saturating at TTL). A version is never reused,
 * so a reference to a version is just "current" or "old": every write that lands turns every
 * reference to the current version old (land()).
 *
 * Faults, on any request while the budget FAULTS lasts: a write may land and its reply
 * be lost (exception), land and be answered "not written" (an SDK retry of a landed first
 * attempt: 412), fail before landing (exception), be answered "not written" without a write
 * (409/429), or time out and still land later (at most one such write per client in flight, for
 * at most LIFE ticks: the "ghost"). Reads may fail. Any number of ticks may pass between a
 * request's send, its landing and its reply. Any client may crash at any point (CRASHES of them);
 * an operator may force-release (FORCES times).
 *
 * Properties (assertions):
 *   mutex     never two clients whose lease is valid by their own clock (Lease.isValid(): HELD and
 *             local deadline not passed, margin included) — a lease broken by force release is
 *             exempt until its deadline, the documented residual window; it never renews again
 *   fencing   every lease handed out has a greater token than every lease handed out before it
 *             (a lease broken before its hand-out excepted), and every claim that lands carries a
 *             greater token than the record it replaces
 *   arrival   acquire never hands out a lease that is invalid on arrival
 *   blocking  (bounded; monitors, not full liveness) a lease its client let go of stops
 *             blocking the key (held in the record and not yet stale) within a bound counted from
 *             the event: a crashed holder's lease and a released lease (release() returned or
 *             threw, or start() gave a late lease back) within TTL + LIFE ticks; a claim whose
 *             acquire threw (a phantom holder) within LIFE + 1 ticks while its background
 *             withdrawal met no fault, else TTL + LIFE. A record that does not block is taken at
 *             once by the next attempt (ConditionalStoreLockManager.attempt: not held or stale -> claim); that the
 *             claim then lands needs a calm store, which the model does not assume.
 *
 * Bugs the engine had, put back with -D (each must fail a property; scripts/model-check.sh):
 *   BUG_RENEW_BY_LEASE_ID  renewal "landed" if the record still carries my lease id, counted from
 *                          this renewal's send time (old ConditionalStoreLease.renewInStore)
 *   BUG_NO_READBACK        a claim whose outcome is unknown is neither read back nor withdrawn
 *   BUG_INVALID_ON_ARRIVAL ManagedLease.start() hands out a lease already past its deadline
 *   BUG_RELEASE_RENEWS     a release that fails leaves the lease HELD and heartbeating
 * Model sensitivity (not a code bug): DRIFT=4 (clock drift beyond the margin: VAL 6) must fail a
 * property (spin finds a lease that arrives "valid" after its record went stale: hand-out order
 * and mutex).
 */

#ifndef N
#define N 3
#endif
#define TTL     5
#define MARGIN  1
#ifndef DRIFT
#define DRIFT   5
#endif
#ifdef NODRIFT
#define VAL     (TTL - MARGIN)
#else
#define VAL     (((TTL - MARGIN) * DRIFT + DRIFT - 2) / (DRIFT - 1))   /* ceil(4 * DRIFT / (DRIFT - 1)) */
#endif
#ifndef MAXTOK
#define MAXTOK  3                /* acquisitions explored: tokens 1..MAXTOK */
#endif
#ifndef FAULTS
#define FAULTS  2                /* faulty answers in a run: lost replies, refused/failed writes, failed reads */
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef FORCES
#define FORCES  1
#endif
#define LIFE    1                /* a write that timed out lands within LIFE ticks after, or never */
#define WDWIN   3                /* ticks ClaimWithdrawal.withdrawLater keeps trying (WITHDRAW_WINDOW_NANOS): covers LIFE */
#define NOBODY  255
#define LIDS    6                /* lease ids per client: more than are ever referenced at once */

/* version references: a version is never reused, so "current" or "old" is all there is to know */
#define R_NONE   0
#define R_ABSENT 1               /* a create: expects no record */
#define R_CUR    2
#define R_OLD    3

/* answers */
#define OK     1
#define EMPTY  2                 /* Optional.empty(): "not written" */
#define EXC    3                 /* LockBackendException: the outcome is unknown */
#define LOSTX  4                 /* LeaseLostException */

/* ManagedLease.State; NOLEASE also stands for RELEASED */
#define NOLEASE   0
#define HELD      1
#define RELEASING 2
#define LOST      3

/* request states */
#define Q_NONE     0
#define Q_INFLIGHT 1
#define Q_LANDED   2

/* where a client is (each step is one store operation and what the code does with its answer) */
#define A_START  0               /* ConditionalStoreLockManager.attempt: first read, or the re-take write */
#define C_WAIT   2               /* ConditionalStoreLockManager.write: the claim is in flight */
#define C_RB     3               /* ClaimWithdrawal.resolveFailedClaim: read back a failed claim */
#define C_RD     4               /* write(): read after "not written" */
#define H_IDLE   5               /* holding: heartbeat or release may start */
#define R_WAIT   6               /* ConditionalStoreLease.renewInStore: a renewal in flight */
#define R_RD     7               /* renewInStore: ours("renew") after "not written" */
#define L_WAIT   8               /* ConditionalStoreLease.releaseInStore: the release in flight */
#define L_RD1    9               /* releaseInStore: did a retried release of ours land? */
#define L_RD2    10              /* releaseInStore: ours("release") */
#define L_RETRY  11              /* LeaseRelease.retryReleaseLater */
#define STOP     12              /* the model's token bound reached: no more acquisitions */

/* why a release runs */
#define RL_USER   0              /* ManagedLease.release(): LeaseRelease.release */
#define RL_LATE   1              /* ManagedLease.start(): invalid on arrival, LeaseRelease.giveBack */
#define RL_RETRY  2              /* retryReleaseLater */
#define RL_ZOMBIE 3              /* BUG_RELEASE_RENEWS: the release failed, the lease stays HELD */

/* why a client let go of a lease (the blocking monitor) */
#define DK_CRASH   1
#define DK_RELEASE 2
#define DK_THREW   3

mtype = { ok, not_written, exception, HELD_, RELEASED_, no_record, create, replace };   /* for the trail */

typedef Req {                    /* one conditional write (create/replace) of a LeaseRecord */
    byte st; byte exp;           /* Q_*, and the version it is conditional on */
    bool held; byte lease; byte rev; byte tok;
    byte cd;                     /* VAL - ticks since its send: the validity it gives if it landed */
    byte newver                  /* once landed: reference to the version it created */
};

/* ---- the store: one record ---- */
bool s_ex;                       /* a record exists (the engine never deletes) */
bool s_held; byte s_lease; byte s_rev; byte s_tok;
byte s_age;                      /* StoredRecord.age in ticks, saturating at TTL */
byte s_cd;                       /* if the stored write is an unconfirmed write of its holder's current lease:
                                    its send countdown (ConditionalStoreLease.unconfirmed.get(revision)) */

/* ---- clients ---- */
byte pc[N];
byte st[N];                      /* ManagedLease.state */
byte vu[N];                      /* validUntilNanos - nanoTime(), in ticks (slowest clock); 0: invalid */
byte acd[N];                     /* attempt(): VAL - ticks since `sent` */
byte lid[N];                     /* lease id of the current lease or claim: who = i * LIDS + lid */
byte tok[N];
byte crev[N];                    /* ConditionalStoreLease.record.revision(): the write known to be stored */
byte lver[N];                    /* ConditionalStoreLease.version */
byte cf[N];                      /* renewInStore's `confirmed`: 0 none, else its countdown + 1 */
byte att[N];                     /* attempt number inside renewInStore / releaseInStore */
byte rlk[N];                     /* RL_*: why the release runs */
bool retake[N];                  /* the claim in flight is the re-take of a key this manager released */
bool crashed[N];
bool broken[N];                  /* the current lease was force-released in the store */
bool bsent[N];                   /* the renewal in flight was sent after that */
Req  q[N];                       /* the request in flight */
Req  g[N]; byte g_age[N];        /* a write that timed out and may still land */
byte wd[N];                      /* ClaimWithdrawal.withdrawLater: 0 none, 1 to look, 2 to release what it saw */
byte wd_lease[N]; byte wd_exp[N]; byte wd_ver[N]; byte wd_tok[N]; byte wd_win[N]; bool wd_due[N];
bool rel[N]; byte rel_ver[N]; byte rel_tok[N];   /* ConditionalStoreLockManager.released: the record we released, its version */
byte dl[N]; byte dk[N];          /* the lease client i last let go of, and why (DK_*; 0: none) */
byte since[N];                   /* ticks since then */
bool wd_hit[N];                  /* a fault hit the withdrawal of that (thrown) claim */

/* ---- the operator ---- */
byte op_ver; byte op_tok; byte op_pc;
Req  w;                          /* scratch: a write that is built and lands within one step */
byte forces_left = FORCES;

/* ---- for the properties ---- */
byte handed;                     /* token of the last lease handed out */
byte faults_left = FAULTS;
byte crashes_left = CRASHES;
byte k, cnt, d;                  /* scratch inside steps; always 0 between them */

#define ME(i)        ((i) * LIDS + lid[i])
#define FAULT        (faults_left > 0)
#define VALID(c)     (st[c] == HELD && vu[c] > 0 && !crashed[c])
#define COND(x)      ((x.exp == R_ABSENT && !s_ex) || (x.exp == R_CUR && s_ex))
#define MINE(who)    (s_ex && s_held && s_lease == (who))       /* LeaseRecord.sameLease with the record */
#define DEC(x, n)    if :: (x) > (n) -> x = (x) - (n) :: else -> x = 0 fi
#define OLDREF(x)    if :: (x) == R_CUR -> x = R_OLD :: else fi
#define CLR(x)       x.st = Q_NONE; x.exp = R_NONE; x.held = 0; x.lease = 0; x.rev = 0; x.tok = 0; x.cd = 0; x.newver = R_NONE
#define WAITING(i)   (pc[i] == C_WAIT || pc[i] == R_WAIT || pc[i] == L_WAIT)
#define TOKMAX       MAXTOK

#define STEP atomic                /* steps that send branch: not d_step */

/* mutex: never two valid leases that were not broken by force release */
inline check_mutex() {
    cnt = 0;
    for (k : 0 .. N - 1) { if :: VALID(k) && !broken[k] -> cnt++ :: else fi }
    assert(cnt <= 1);
    cnt = 0; k = 0
}

/* the store applies write x (of client c, or NOBODY); every reference to the current version turns old */
inline land(x, c) {
    for (k : 0 .. N - 1) {
        OLDREF(lver[k]); OLDREF(q[k].exp); OLDREF(q[k].newver); OLDREF(g[k].exp); OLDREF(wd_exp[k]);
        OLDREF(wd_ver[k]); OLDREF(rel_ver[k])
    }
    OLDREF(op_ver);
    k = 0;
    if  /* fencing: a claim (held, a new lease id) carries a greater token than the record it replaces */
    :: x.held && !(s_ex && s_held && s_lease == x.lease) -> assert(!s_ex || x.tok > s_tok)
    :: else
    fi;
    if  /* a force release (lease id cleared) of a client's current lease breaks that lease */
    :: !x.held && x.lease == NOBODY && s_held && s_lease / LIDS < N ->
        if :: s_lease == ME(s_lease / LIDS) -> broken[s_lease / LIDS] = 1   /* handed out or not yet */
           :: else fi
    :: else
    fi;
    printf("  store: write lands: %e lease %d.%d rev %d token %d\n", (x.held -> HELD_ : RELEASED_),
           (x.lease == NOBODY -> 9 : x.lease / LIDS), (x.lease == NOBODY -> 9 : x.lease % LIDS), x.rev, x.tok);
    s_ex = 1; s_held = x.held; s_lease = x.lease; s_rev = x.rev; s_tok = x.tok; s_age = 0;
    if :: c < N && x.held && x.lease == ME(c) && st[c] != NOLEASE -> s_cd = x.cd
       :: else -> s_cd = 0
    fi
}

/*
 * The store receives q[i] (filled in by the caller) in the step that sends it: it applies it if its
 * condition holds, or — while faults are left — refuses it (409/429: "not written"), fails it
 * (exception), or lets it time out and land later (the ghost). A write that lands after it was sent
 * is the same as that write sent when it landed, except that its validity counts from the earlier
 * send: landing at the send is the worst case, so it is the one modelled. The answer comes in a
 * later step (any number of ticks later).
 */
inline send(i) {
    if
    :: COND(q[i]) -> land(q[i], i); q[i].st = Q_LANDED; q[i].newver = R_CUR
    :: !COND(q[i]) -> q[i].st = Q_INFLIGHT; q[i].newver = EMPTY                  /* the condition failed */
    :: COND(q[i]) && FAULT -> faults_left--; q[i].st = Q_INFLIGHT; q[i].newver = EMPTY   /* 409/429 */
    :: COND(q[i]) && FAULT -> faults_left--; q[i].st = Q_INFLIGHT; q[i].newver = EXC     /* failed */
    :: COND(q[i]) && FAULT && !g[i].st -> faults_left--; to_ghost(i); q[i].st = Q_INFLIGHT; q[i].newver = EXC
    fi
}

/* a request that timed out may still land later: it becomes client i's ghost */
inline to_ghost(i) {
    printf("c%d: (that write is still on its way and may land later)\n", i);
    g[i].st = Q_INFLIGHT; g[i].exp = q[i].exp; g[i].held = q[i].held; g[i].lease = q[i].lease;
    g[i].rev = q[i].rev; g[i].tok = q[i].tok; g[i].cd = q[i].cd; g_age[i] = 0
}

/* the lease of client i has ended (RELEASED or LOST, and done with): forget what only it needed */
inline drop_lease(i) {
    st[i] = NOLEASE; vu[i] = 0; crev[i] = 0; lver[i] = R_NONE; cf[i] = 0; broken[i] = 0; tok[i] = 0;
    att[i] = 0; rlk[i] = RL_USER; g[i].cd = 0;
    if :: s_ex && s_lease / LIDS == i -> s_cd = 0 :: else fi
}

/* a lease id no record, request or task still carries (the engine draws a random UUID) */
inline fresh_lid(i) {
    lid[i] = 0;
    do
    :: ((s_ex && s_lease == ME(i)) || (g[i].st && g[i].lease == ME(i)) || (wd[i] && wd_lease[i] == ME(i)) || (dk[i] && dl[i] == ME(i))) -> lid[i]++
    :: else -> break
    od;
    assert(lid[i] < LIDS)
}

/* the blocking monitor: client i let go of lease `who` (why: DK_*) */
inline let_go(i, why, who) {
    dl[i] = who; dk[i] = why; since[i] = 0; wd_hit[i] = 0
}

/* ---- ConditionalStoreLockManager.attempt / write ---- */

/* write(): send the claim, conditional on q[i].exp (set by the caller), carrying token tk */
inline claim_send(i, tk) {
    if
    :: tk > TOKMAX -> CLR(q[i]); acd[i] = 0; pc[i] = STOP
    :: else ->
        fresh_lid(i); tok[i] = tk; broken[i] = 0;
        printf("c%d: sends claim, lease %d.%d token %d (%e)\n", i, i, lid[i], tk, (q[i].exp == R_ABSENT -> create : replace));
        q[i].held = 1; q[i].lease = ME(i); q[i].rev = 0; q[i].tok = tk; q[i].cd = acd[i];
        pc[i] = C_WAIT; send(i)
    fi
}

/* attempt(): decide on the record as it is now (read, or `looked` after a missed re-take) */
inline decide(i) {
    if
    :: !s_ex -> q[i].exp = R_ABSENT; claim_send(i, 1)
    :: s_ex && s_held && s_age < TTL ->                          /* held, not stale: wait */
        acd[i] = 0; CLR(q[i]); pc[i] = A_START
    :: else -> q[i].exp = R_CUR; claim_send(i, s_tok + 1)          /* free, or stale: take over */
    fi
}

/* the acquisition threw (the caller may call acquire again); claimed: a claim of it was sent */
inline threw(i, claimed) {
    if :: claimed -> let_go(i, DK_THREW, ME(i)) :: else fi;
    CLR(q[i]); acd[i] = 0; tok[i] = 0; retake[i] = 0; pc[i] = A_START
}

/* new ConditionalStoreLease(..., sent).begin(): ManagedLease.start() */
inline handout(i, ver) {
    lver[i] = ver; st[i] = HELD; vu[i] = acd[i]; acd[i] = 0; crev[i] = 0; retake[i] = 0;
    s_cd = 0; CLR(q[i]);
#ifndef BUG_INVALID_ON_ARRIVAL
    if
    :: vu[i] == 0 -> st[i] = RELEASING; rlk[i] = RL_LATE; att[i] = 0; release_send(i)   /* given back */
    :: else ->
#else
    if
    :: true ->
#endif
        printf("c%d: acquire returns lease %d.%d token %d, valid for %d ticks\n", i, i, lid[i], tok[i], vu[i]);
        assert(vu[i] > 0);                                       /* arrival */
        assert(broken[i] || tok[i] > handed);                    /* fencing, in hand-out order */
        if :: tok[i] > handed -> handed = tok[i] :: else fi;
        check_mutex();
        pc[i] = H_IDLE
    fi
}

/* ClaimWithdrawal.withdrawLater(name, key, expected, mine, sent, FIRST_WITHDRAW_NANOS) */
inline withdraw_later(i) {
#ifndef BUG_NO_READBACK
    wd[i] = 1; wd_lease[i] = ME(i); wd_exp[i] = q[i].exp; wd_win[i] = WDWIN; wd_due[i] = 1
#else
    skip
#endif
}

inline claim_answered(i, res) {
    if
    :: res == OK -> handout(i, q[i].newver)
    :: res == EXC ->
#ifdef BUG_NO_READBACK
        threw(i, 1)                                              /* the old code: rethrow, nothing else */
#else
        q[i].st = Q_NONE; pc[i] = C_RB                           /* keep q[i].exp for mayStillLand */
#endif
    :: res == EMPTY -> q[i].st = Q_NONE; pc[i] = C_RD
    fi
}

/* ---- ConditionalStoreLease.renewInStore, called by ManagedLease.renew() (LeaseTimer's heartbeat) ---- */

/* a fresh revision: one no write of this lease still stored or in flight carries (++lastRevision) */
inline renew_send(i) {
    q[i].exp = lver[i]; q[i].held = 1; q[i].lease = ME(i); q[i].tok = tok[i]; q[i].cd = VAL;
    q[i].rev = 1;
    do
    :: (q[i].rev == crev[i] || (MINE(ME(i)) && s_rev == q[i].rev) || (g[i].st && g[i].lease == ME(i) && g[i].rev == q[i].rev)) ->
        q[i].rev++
    :: else -> break
    od;
    pc[i] = R_WAIT; bsent[i] = broken[i];
    printf("c%d: sends renewal rev %d\n", i, q[i].rev);
    send(i)
}

/* renew() after renewInStore returned `landed` (a countdown + 1; 0: nothing confirmed) */
inline renew_done(i, landed) {
    if
    :: landed > 0 && st[i] == HELD ->                            /* validity from that write's send time */
        assert(!bsent[i]);                                       /* after a break, no renewal extends it */
        if :: landed - 1 > vu[i] -> vu[i] = landed - 1 :: else fi;
        printf("c%d: renewal counted: valid for %d ticks\n", i, vu[i]);
        check_mutex()
    :: else
    fi;
    CLR(q[i]); cf[i] = 0; att[i] = 0; bsent[i] = 0; pc[i] = H_IDLE
}

inline renew_lost(i) {
    CLR(q[i]); cf[i] = 0; att[i] = 0; bsent[i] = 0;
    if :: st[i] == HELD -> st[i] = LOST :: else fi;              /* lose(LeaseLostException) */
    pc[i] = H_IDLE
}

inline renew_answered(i, res) {
    if
    :: res == OK -> crev[i] = q[i].rev; lver[i] = q[i].newver; s_cd = 0; renew_done(i, q[i].cd + 1)
    :: res == EXC -> renew_done(i, cf[i])                        /* this one unknown: the earlier one stands */
    :: res == EMPTY -> q[i].st = Q_NONE; pc[i] = R_RD
    fi
}

/* ours("renew") found the record still ours: which of our writes is it? (landedWrite) */
inline renew_read(i) {
#ifdef BUG_RENEW_BY_LEASE_ID
    /* the old rule: the record carries my lease id, so "a retried write of mine landed" */
    crev[i] = s_rev; lver[i] = R_CUR; s_cd = 0; renew_done(i, q[i].cd + 1)
#else
    if
    :: s_rev == crev[i] -> lver[i] = R_CUR; renew_done(i, cf[i])             /* nothing new landed */
    :: s_rev != crev[i] && s_rev == q[i].rev ->                              /* an SDK retry of this one */
        crev[i] = s_rev; lver[i] = R_CUR; s_cd = 0; renew_done(i, q[i].cd + 1)
    :: s_rev != crev[i] && s_rev != q[i].rev ->                              /* an earlier one whose reply was lost */
        cf[i] = s_cd + 1; crev[i] = s_rev; lver[i] = R_CUR; s_cd = 0;
        if
        :: att[i] == 0 -> att[i] = 1; renew_send(i)                          /* write again at once */
        :: else -> renew_done(i, cf[i])
        fi
    fi
#endif
}

/* ---- ConditionalStoreLease.releaseInStore (up to three writes), for LeaseRelease.release/giveBack/retryReleaseLater ---- */

inline release_send(i) {
    q[i].exp = lver[i]; q[i].held = 0; q[i].lease = ME(i); q[i].rev = 0; q[i].tok = tok[i];
    pc[i] = L_WAIT;
    printf("c%d: sends release\n", i);
    send(i)
}

inline release_done(i, res) {
    CLR(q[i]); att[i] = 0;
    if
    :: rlk[i] == RL_LATE ->                                      /* start() throws; release errors ignored */
        let_go(i, DK_RELEASE, ME(i)); drop_lease(i); threw(i, 0)
    :: rlk[i] != RL_LATE && res != EXC ->
        if :: rlk[i] == RL_USER -> let_go(i, DK_RELEASE, ME(i)) :: else fi;
        drop_lease(i); pc[i] = A_START
    :: rlk[i] == RL_USER && res == EXC ->                        /* release() throws */
        let_go(i, DK_RELEASE, ME(i));
#ifdef BUG_RELEASE_RENEWS
        rlk[i] = RL_ZOMBIE; pc[i] = H_IDLE                       /* the old release(): still HELD, heartbeating */
#else
        rlk[i] = RL_RETRY; pc[i] = L_RETRY                       /* RELEASING: not valid, not renewed */
#endif
    :: rlk[i] == RL_RETRY && res == EXC -> pc[i] = L_RETRY
    fi
}

inline release_answered(i, res) {
    if
    :: res == OK -> rel[i] = 1; rel_ver[i] = q[i].newver; rel_tok[i] = tok[i]; release_done(i, OK)
    :: res == EXC -> release_done(i, EXC)
    :: res == EMPTY -> q[i].st = Q_NONE; pc[i] = L_RD1
    fi
}

inline answered(i, res) {
    printf("c%d: answer %e\n", i, (res == OK -> ok : (res == EMPTY -> not_written : exception)));
    if
    :: pc[i] == C_WAIT -> claim_answered(i, res)
    :: pc[i] == R_WAIT -> renew_answered(i, res)
    :: pc[i] == L_WAIT -> release_answered(i, res)
    fi
}

/* client i: its user thread, its lease (ManagedLease with its heartbeat), its background tasks */
proctype Client(byte i) {
end_client:
    do
    /* ---- the store answers a request (sent and, if it landed, applied by send(); see send()) ---- */
    :: STEP { !crashed[i] && WAITING(i) && q[i].st == Q_LANDED -> answered(i, OK) }
    :: STEP { !crashed[i] && WAITING(i) && q[i].st == Q_LANDED && FAULT -> faults_left--; answered(i, EMPTY) }  /* SDK retry saw 412 */
    :: STEP { !crashed[i] && WAITING(i) && q[i].st == Q_LANDED && FAULT -> faults_left--; answered(i, EXC) }    /* reply lost */
    :: STEP { !crashed[i] && WAITING(i) && q[i].st == Q_INFLIGHT -> answered(i, q[i].newver) }  /* EMPTY or EXC */

    /* ---- a read fails (the step that would have read throws) ---- */
    :: STEP { !crashed[i] && pc[i] == A_START && !wd[i] && !rel[i] && FAULT -> faults_left--; printf("c%d: read fails\n", i); threw(i, 0) }
    :: STEP { !crashed[i] && (pc[i] == C_RB || pc[i] == C_RD) && FAULT -> faults_left--; printf("c%d: read fails\n", i);
              withdraw_later(i); threw(i, 1) }                    /* cannot tell: withdraw it if it landed */
    :: STEP { !crashed[i] && pc[i] == R_RD && FAULT -> faults_left--; printf("c%d: read fails\n", i); renew_done(i, 0) }   /* ours() throws */
    :: STEP { !crashed[i] && (pc[i] == L_RD1 || pc[i] == L_RD2) && FAULT -> faults_left--; printf("c%d: read fails\n", i); release_done(i, EXC) }

    /* ---- ConditionalStoreLockManager.acquire / attempt ---- */
    :: STEP { !crashed[i] && pc[i] == A_START && !wd[i] && rel[i] ->      /* re-take: one write on the version we released */
              acd[i] = VAL; q[i].exp = rel_ver[i]; retake[i] = 1; claim_send(i, rel_tok[i] + 1);
              rel[i] = 0; rel_ver[i] = R_NONE; rel_tok[i] = 0 }
    :: STEP { !crashed[i] && pc[i] == A_START && !wd[i] && !rel[i] -> acd[i] = VAL; retake[i] = 0;
              printf("c%d: reads: %e token %d age %d\n", i, (!s_ex -> no_record : (s_held -> HELD_ : RELEASED_)), s_tok, s_age);
              decide(i) }
    :: STEP { !crashed[i] && pc[i] == C_RB ->                    /* ClaimWithdrawal.resolveFailedClaim: the read */
              if
              :: MINE(ME(i)) -> handout(i, R_CUR)
              :: else ->
                  if :: COND(q[i]) -> withdraw_later(i) :: else fi;   /* mayStillLand(expected, after) */
                  threw(i, 1)
              fi }
    :: STEP { !crashed[i] && pc[i] == C_RD ->                    /* write(): not written, or a retry of ours landed */
              if
              :: MINE(ME(i)) -> handout(i, R_CUR)
              :: else ->
                  tok[i] = 0;
                  if :: retake[i] -> retake[i] = 0; decide(i)       /* decide on `looked` */
                     :: else -> acd[i] = 0; CLR(q[i]); pc[i] = A_START

                  fi
              fi }

    /* ---- holding: the heartbeat (LeaseTimer; renew() at any time), release(), the deadline ---- */
    :: d_step { !crashed[i] && pc[i] == H_IDLE && st[i] != HELD -> drop_lease(i); pc[i] = A_START }  /* LOST: listeners ran */
    :: STEP { !crashed[i] && pc[i] == H_IDLE && st[i] == HELD && vu[i] > 0 -> att[i] = 0; cf[i] = 0; renew_send(i) }
    :: STEP { !crashed[i] && pc[i] == H_IDLE && st[i] == HELD && rlk[i] != RL_ZOMBIE ->
#ifndef BUG_RELEASE_RENEWS
                st[i] = RELEASING;                               /* invalid at once, no more renewals */
#endif
                rlk[i] = RL_USER; att[i] = 0; release_send(i) }
    :: STEP { !crashed[i] && pc[i] == R_RD ->                    /* ours("renew") */
              if :: MINE(ME(i)) -> renew_read(i) :: else -> renew_lost(i) fi }
    :: STEP { !crashed[i] && pc[i] == L_RD1 ->
              if
              :: s_ex && !s_held && s_lease == ME(i) -> release_done(i, OK)     /* our retried release landed */
              :: else -> pc[i] = L_RD2
              fi }
    :: STEP { !crashed[i] && pc[i] == L_RD2 ->                   /* ours("release") */
              if
              :: MINE(ME(i)) ->
                  crev[i] = s_rev; lver[i] = R_CUR; s_cd = 0; att[i]++;
                  if :: att[i] == 3 -> release_done(i, EXC) :: else -> release_send(i) fi
              :: else -> release_done(i, LOSTX)
              fi }
    :: STEP { !crashed[i] && pc[i] == L_RETRY -> att[i] = 0; release_send(i) }
    :: d_step { !crashed[i] && pc[i] == L_RETRY && vu[i] == 0 -> drop_lease(i); pc[i] = A_START }  /* past expiry: give up */

    /* ---- background: a late write lands; ClaimWithdrawal.withdrawLater's task ---- */
    :: d_step { g[i].st && COND(g[i]) -> land(g[i], i); CLR(g[i]); g_age[i] = 0 }
    :: d_step { !crashed[i] && wd[i] == 1 ->
                if
                :: MINE(wd_lease[i]) -> wd[i] = 2; wd_ver[i] = R_CUR; wd_tok[i] = s_tok    /* it landed: release it */
                :: !MINE(wd_lease[i]) && !((wd_exp[i] == R_ABSENT && !s_ex) || (wd_exp[i] == R_CUR && s_ex)) ->
                    wd[i] = 0; wd_lease[i] = 0; wd_exp[i] = R_NONE; wd_win[i] = 0       /* can never land now */
                :: else
                fi;
                wd_due[i] = 0 }
    :: d_step { !crashed[i] && wd[i] == 1 && FAULT -> faults_left--; wd_due[i] = 0; wd_hit[i] = 1 }
    :: d_step { !crashed[i] && wd[i] == 2 ->                     /* replace(version seen, released(true)) */
                if
                :: wd_ver[i] == R_CUR ->
                    w.held = 0; w.lease = wd_lease[i]; w.tok = wd_tok[i]; land(w, NOBODY); CLR(w);
                    wd[i] = 0; wd_lease[i] = 0; wd_exp[i] = R_NONE; wd_win[i] = 0; wd_due[i] = 0
                :: else -> wd[i] = 1                             /* it moved on: look again */
                fi;
                wd_ver[i] = R_NONE; wd_tok[i] = 0 }
    :: d_step { !crashed[i] && wd[i] == 2 && FAULT -> faults_left--; wd_hit[i] = 1; wd[i] = 1; wd_ver[i] = R_NONE; wd_tok[i] = 0 }

    /* ---- the process dies; a write of it already on its way may still land ---- */
    :: STEP { !crashed[i] && crashes_left > 0 ->
              crashed[i] = 1; crashes_left--; printf("c%d: CRASHES\n", i);
              let_go(i, DK_CRASH, ME(i));
              g[i].cd = 0; CLR(q[i]); pc[i] = STOP; st[i] = NOLEASE; vu[i] = 0; acd[i] = 0; tok[i] = 0; crev[i] = 0;
              lver[i] = R_NONE; cf[i] = 0; att[i] = 0; rlk[i] = 0; retake[i] = 0; broken[i] = 0;
              wd[i] = 0; wd_lease[i] = 0; wd_exp[i] = R_NONE; wd_ver[i] = R_NONE; wd_tok[i] = 0; wd_win[i] = 0;
              wd_due[i] = 0; rel[i] = 0; rel_ver[i] = R_NONE; rel_tok[i] = 0;
              if :: s_ex && s_lease / LIDS == i -> s_cd = 0 :: else fi }
    od
}

/* an operator's LockManager.forceRelease(key): read; if held, replace with released(false), id cleared */
active proctype Operator() {
end_op:
    do
    :: d_step { op_pc == 0 && forces_left > 0 && s_ex && s_held ->
                forces_left--; op_pc = 1; op_ver = R_CUR; op_tok = s_tok; printf("operator: reads token %d, force-releases\n", s_tok) }
    :: d_step { op_pc == 1 ->
                if
                :: op_ver == R_CUR -> w.held = 0; w.lease = NOBODY; w.tok = op_tok; land(w, NOBODY); CLR(w)
                :: else                                          /* a miss: breakLock reads again; once here */
                fi;
                op_pc = 0; op_ver = R_NONE; op_tok = 0 }
    od
}

/* the blocking monitor's bounds, in ticks after the event (see the header) */
#define BOUND_LET_GO  (TTL + LIFE)
#define BOUND_PHANTOM (LIFE + 1)
#define BOUND(c)      ((dk[c] == DK_THREW && !wd_hit[c]) -> BOUND_PHANTOM : BOUND_LET_GO)
#define BLOCKS(c)     (s_ex && s_held && s_lease == dl[c] && s_age < TTL)
/* a write of that lease can still land: a late write on its way, or the lease still heartbeats */
#define MAY_BLOCK(c)  ((g[c].st && g[c].lease == dl[c]) || (q[c].st && q[c].lease == dl[c] && q[c].held) \
                       || (st[c] != NOLEASE && ME(c) == dl[c]) || (pc[c] == C_WAIT && ME(c) == dl[c]))

/* a withdrawal that is due runs (100 ms after the throw, then backing off) before the next tick */
#if N == 2
#define CAN_TICK  (!wd_due[0] && !wd_due[1] && wd[0] != 2 && wd[1] != 2)
#elif N == 3
#define CAN_TICK  (!wd_due[0] && !wd_due[1] && !wd_due[2] && wd[0] != 2 && wd[1] != 2 && wd[2] != 2)
#endif

inline local_tick(c) {
    DEC(vu[c], 1); DEC(acd[c], 1); DEC(q[c].cd, 1); DEC(g[c].cd, 1); DEC(wd_win[c], 1);
    if :: cf[c] > 1 -> DEC(cf[c], 1); if :: cf[c] == 0 -> cf[c] = 1 :: else fi :: else fi;
    if :: s_ex && s_lease / LIDS == c -> DEC(s_cd, 1) :: else fi;
    if :: st[c] == HELD && vu[c] == 0 -> st[c] = LOST :: else fi;          /* LeaseTimer.tick: lose() */
    if
    :: wd[c] && wd_win[c] == 0 -> wd[c] = 0; wd_lease[c] = 0; wd_exp[c] = R_NONE; wd_ver[c] = R_NONE; wd_tok[c] = 0; wd_due[c] = 0
    :: wd[c] && wd_win[c] > 0 -> wd_due[c] = 1
    :: else
    fi
}

/* the store's clock; a tick also moves every client's local clock (at the slowest rate: see VAL) */
inline tick_client(c) {
    if :: g[c].st -> g_age[c]++; if :: g_age[c] > LIFE -> CLR(g[c]); g_age[c] = 0 :: else fi
       :: else fi;
    if :: !crashed[c] -> local_tick(c) :: else fi;
    if
    :: dk[c] ->
        if :: since[c] <= BOUND_LET_GO -> since[c]++ :: else fi;
        if
        :: BLOCKS(c) -> assert(since[c] <= BOUND(c))             /* blocking */
        :: else
        fi;
        if :: !BLOCKS(c) && !MAY_BLOCK(c) -> dl[c] = 0; dk[c] = 0; since[c] = 0; wd_hit[c] = 0 :: else fi
    :: else
    fi
}

active proctype Clock() {
end_clock:
    do
    :: atomic {
        CAN_TICK ->
        if :: s_ex && s_held && s_age < TTL -> s_age++ :: else fi;   /* a released record's age matters to no one */
        tick_client(0); tick_client(1);
#if N > 2
        tick_client(2);
#endif
#if N > 2
        printf("-- tick: record age %d; valid for (store ticks) c0 %d, c1 %d, c2 %d\n", s_age,
               VALID(0) * vu[0], VALID(1) * vu[1], VALID(2) * vu[2])
#else
        printf("-- tick: record age %d; valid for (store ticks) c0 %d, c1 %d\n", s_age, VALID(0) * vu[0], VALID(1) * vu[1])
#endif
       }
    od
}

init {
    atomic {
        byte i;
        for (i : 0 .. N - 1) { run Client(i) }
        i = 0
    }
}
