/*
 * PostgreSQL mode=lease (lock-postgres: LeaseTableLockManager, TableLease, LeaseRenewals; leases managed by
 * dev.latchkey.spi.ManagedLease), one key, for spin 6.5. It is not the lease engine: there is no
 * ConditionalStore, each operation is one SQL statement whose WHERE decides by the server's clock.
 * docs/model-checking.md says what this proves, for which bounds, and what it abstracts.
 *
 * Time as in lease-engine.pml: one tick is TTL/5 (the safety margin), TTL is 5 ticks; a lease is
 * valid for 4 ticks of its client's clock after the send of its acquisition or of its last renewal
 * that answered one row, which on the slowest clock allowed (DRIFT 5: 20 % slow) lasts VAL = 5
 * server ticks.
 *
 * The server: the key's row (lease_id, expires_at as ticks left by clock_timestamp(), token) and
 * the durability of its commits. The statements, each applied atomically when it runs:
 *   acquire  INSERT ... ON CONFLICT (key) DO UPDATE ... token = l.token + 1 WHERE l.lease_id IS
 *            NULL OR l.expires_at <= clock_timestamp() RETURNING token      (durable commit)
 *   renew    UPDATE ... SET expires_at = clock_timestamp() + w.ttl FROM unnest(keys, lease_ids,
 *            ttls) w WHERE key = w.key AND lease_id = w.lease_id RETURNING lease_id  (durable commit)
 *            LeaseRenewals: one statement carries every due lease of a manager. For this key's
 *            lease that is either its own renewal (the lease waits for it: C_REN) or a statement
 *            another lease's heartbeat sent that carries it early (bat): the lease does not wait,
 *            so that statement may run at any point up to LIFE ticks after its send (it may be
 *            overtaken by the lease's release, its deadline, a takeover, a break: a statement on
 *            another connection), and its answer reaches the lease later, through its renew(), if
 *            it is still held by then. A failure of a carried statement only marks the outcome
 *            unknown (recordInStore); the failure the lease keeps for its next renewal makes that
 *            renewal fail without a statement, which is a renewal not made (always allowed here).
 *   release  UPDATE ... SET lease_id = NULL, expires_at = clock_timestamp() WHERE lease_id = mine
 *            (synchronous_commit off: a server crash before the next durable commit undoes it)
 *   break    forceRelease: UPDATE ... SET lease_id = NULL WHERE lease_id IS NOT NULL AND
 *            expires_at > clock_timestamp()                                  (durable commit)
 * A durable commit flushes every commit before it. A statement runs in the step that sends it;
 * its reply comes any number of ticks later, or is lost. Faults, while the budget FAULTS lasts: a
 * statement runs and its reply is lost (the connection fails: outcome unknown), fails before
 * running (also outcome unknown to the client), or (the acquisition) runs up to LIFE ticks later
 * (a statement still running when its client gave up; PgPool ends those within a second); a
 * withdrawal's release fails. CRASHES clients may die at any point; an operator breaks FORCES
 * times; the server crashes SRVCRASHES times (replies in flight are lost, unflushed commits undone).
 *
 * Properties (assertions):
 *   mutex     never two clients whose lease is valid by their own clock (HELD, deadline not
 *             passed, margin included); a broken lease is exempt until its holder notices
 *   fencing   every acquisition that lands carries a greater token than the one before it, and
 *             leases are handed out in token order (a lease broken before hand-out excepted)
 *   arrival   acquire never hands out a lease that is invalid on arrival (ManagedLease.start)
 *   released  when release() returns, the row does not name the lease (until a server crash
 *             undoes that asynchronous commit: then blocking below)
 *   blocking  (bounded monitors) a lease its client let go of stops blocking the key (the row
 *             names it and has not expired): an acquisition whose outcome is unknown and that had
 *             run when it threw, and a lease lost at its deadline after a renewal whose outcome is
 *             unknown, within 1 tick while the withdrawal met no fault (TableLease.onLost and
 *             withdrawLater try before the next tick) and no server crash undid it (the
 *             withdrawal is a release: committed asynchronously); a crashed holder's, a late
 *             acquisition's, a released lease's (a server crash may undo the release) within
 *             TTL + LIFE ticks
 *
 * Bugs put back with -D (each must fail a property; scripts/model-check.sh):
 *   BUG_NO_WITHDRAW        an acquisition whose reply was lost is not withdrawn (before 9001e02)
 *                                                                                     -> blocking
 *   BUG_NO_RENEW_WITHDRAW  a lease that ran out after a renewal whose outcome is unknown leaves
 *                          that renewal's extension in the row (before 9001e02)      -> blocking
 *   BUG_INVALID_ON_ARRIVAL ManagedLease.start() hands out a lease already past its deadline
 *                          (before 26a3adc)                                           -> arrival
 *   BUG_BATCH_FROM_ANSWER  a lease a batch carried early counts its validity from the answer
 *                          (LeaseRenewals.tell), not from the statement's send          -> mutex
 * Model sensitivity (not code bugs): BUG_ASYNC_RENEW (renewals committed like releases, without
 * waiting for the disk) must fail mutex after a server crash, BUG_ASYNC_ACQUIRE (acquisitions so)
 * fencing; DRIFT=4 must fail mutex.
 */

#define N       3
#define TTL     5
#define MARGIN  1
#ifndef DRIFT
#define DRIFT   5
#endif
#define VAL     (((TTL - MARGIN) * DRIFT + DRIFT - 2) / (DRIFT - 1))   /* ceil(4 * DRIFT / (DRIFT - 1)) */
#define LIFE    1                /* an acquisition that timed out runs within LIFE ticks, or never */
#ifndef MAXTOK
#define MAXTOK  2                /* acquisitions explored: tokens 1..MAXTOK */
#endif
#ifndef FAULTS
#define FAULTS  1
#endif
#ifndef CRASHES
#define CRASHES 0
#endif
#ifndef FORCES
#define FORCES  0
#endif
#ifndef CARRIED
#define CARRIED 1                /* clients whose lease a batch may carry early (the clients are alike) */
#endif
#ifndef SRVCRASHES
#define SRVCRASHES 0
#endif
#define NOBODY  255

#define C_FREE   0               /* LeaseTableLockManager.attempt may start */
#define C_ACQ    1               /* the acquisition ran; its reply is on its way */
#define C_HOLD   2
#define C_REN    3               /* the renewal ran; its reply is on its way */
#define C_RETRY  4               /* LeaseRelease.retryReleaseLater */
#define C_WD     5               /* withdrawLater: release conditional on our lease id, until its window ends */
#define C_DEAD   6
#define C_DONE   7

byte rlid = NOBODY;              /* the row: lease_id (NOBODY: NULL) */
byte rexp;                       /* expires_at, as ticks left (0: expires_at <= clock_timestamp()) */
byte rtok;                       /* token */
bool dirty;                      /* a commit since the last durable one: a server crash undoes it */
byte dlid = NOBODY;              /* the row as of the last durable commit */
byte dexp;
byte dtok;
byte handed;                     /* the greatest token handed out */
byte maxtok;                     /* the greatest token that ever landed (the model's knowledge) */

byte pc[N];
byte gen[N];                     /* which of three lease ids the current attempt uses */
bool held[N];
byte vu[N];
byte cd[N];                      /* the validity the statement in flight gives: VAL - ticks since its send */
bool got[N];                     /* its answer: a token / one row */
bool rlost[N];                   /* its reply is lost (a server crash) */
byte tok[N];
bool brk[N];
bool unk[N];                     /* TableLease.unknownSentNanos != 0 */
byte ucd[N];                     /* ticks until the TTL of that renewal (unknownSentNanos + TTL) is up */
byte wwin[N];                    /* the withdrawal's window (untilNanos) */
bool wdue[N];
bool ghost[N];                   /* a late acquisition on its way */
bool bat[N];                     /* a batch statement that carries the lease early is in flight */
bool bran[N];                    /* ... and it ran */
byte bid[N];                     /* the lease id it carries */
byte bcd[N];                     /* the validity it gives: VAL - ticks since its send */
byte bage[N];                    /* ticks since its send (it runs within LIFE) */
bool bgot[N];                    /* it returned the lease's row */
bool blost[N];                   /* its reply is lost (a server crash) */
byte gage[N];
byte gone[N];                    /* the blocking monitor's bound (0: not let go) */
byte gage2[N];

byte faults_left = FAULTS;
byte crashes_left = CRASHES;
byte forces_left = FORCES;
byte srv_left = SRVCRASHES;
byte k, cnt;

#define VALID(c) (held[c] && vu[c] > 0)
#define ID(c)    ((c) * 4 + gen[c])
#define LIVE(c)  (rlid == ID(c) && rexp > 0)
/* live, or a server crash may bring it back (an unflushed release of it) */
#define MAYLIVE(c) (LIVE(c) || (dirty && dlid == ID(c) && dexp > 0))
#define FAULT    (faults_left > 0)
/* a carried statement not yet run LIFE ticks after its send: it runs (or never does) before time goes on */
#define OVERDUE(c) (bat[c] && !bran[c] && bage[c] >= LIFE)
#ifdef BUG_INVALID_ON_ARRIVAL
#define ARRIVES(c) 1
#else
#define ARRIVES(c) (cd[c] > 0)
#endif

inline check_mutex() {
    cnt = 0;
    for (k : 0 .. N - 1) { if :: VALID(k) && !brk[k] -> cnt++ :: else fi }
    assert(cnt <= 1);
    cnt = 0; k = 0
}

inline durable() { dirty = 0; dlid = rlid; dexp = rexp; dtok = rtok }

/* a durable commit flushes; an asynchronous one leaves the durable copy as it was */
inline commit(sync) {
    if :: sync -> durable() :: else -> dirty = 1 fi
}

/* the acquisition statement for client c */
inline srv_acquire(c) {
    if
    :: rlid == NOBODY || rexp == 0 ->
        rtok++; assert(rtok > maxtok); maxtok = rtok;            /* fencing: every token that lands is new */
        rlid = ID(c); rexp = TTL; got[c] = 1; tok[c] = rtok;
#ifdef BUG_ASYNC_ACQUIRE
        commit(0)
#else
        commit(1)
#endif
    :: else -> got[c] = 0; commit(1)                             /* ON CONFLICT locks the row: a commit all the same */
    fi
}
/* the renewal statement's effect on the row of lease id `id`; ok: it returned the row */
inline renew_row(id, ok) {
    if
    :: rlid == id -> rexp = TTL; ok = 1;
#ifdef BUG_ASYNC_RENEW
        commit(0)
#else
        commit(1)
#endif
    :: else -> ok = 0
    fi
}
inline srv_renew(c) { renew_row(ID(c), got[c]) }
inline srv_release(c) {
    if
    :: rlid == ID(c) -> rlid = NOBODY; rexp = 0; got[c] = 1; commit(0)   /* synchronous_commit off */
    :: else -> got[c] = 0
    fi
}

inline FREE(c) {
    pc[c] = C_FREE; held[c] = 0; vu[c] = 0; cd[c] = 0; got[c] = 0; rlost[c] = 0; tok[c] = 0; brk[c] = 0;
    unk[c] = 0; ucd[c] = 0; wwin[c] = 0; wdue[c] = 0
}

inline new_id(c) {
    gen[c] = 0;
    do
    :: ID(c) == rlid || ID(c) == dlid || bat[c] && ID(c) == bid[c] -> gen[c]++
    :: else -> break
    od
}

/* the blocking monitor: the client let go of its lease (the first such event sets the bound) */
inline let_go(c, bound) {
    if :: gone[c] == 0 -> gone[c] = bound :: else fi
}

/* a fault hit the withdrawal, or the client crashed: the lease may block until it expires */
inline relax(c) { gone[c] = TTL + LIFE }

inline fault() { faults_left-- }

/* withdrawLater(key, leaseId, now, until): the first try before the next tick, then backing off */
inline withdraw_later(c, window, bound) {
    wwin[c] = window; cd[c] = 0; let_go(c, bound);
#ifdef BUG_NO_WITHDRAW
    FREE(c)
#else
    wdue[c] = 1; pc[c] = C_WD
#endif
}

proctype Client(byte i) {
end_client:
    do
    /* attempt: one statement with a fresh lease id */
    :: atomic { pc[i] == C_FREE && maxtok < MAXTOK && !MAYLIVE(i) && !ghost[i] && !bat[i] ->   /* our last lease id is dead */
        new_id(i); gone[i] = 0; gage2[i] = 0; cd[i] = VAL;
        if
        :: srv_acquire(i); pc[i] = C_ACQ
        :: FAULT -> fault(); srv_acquire(i); printf("c%d: acquire ran (%d), its reply is lost\n", i, got[i]);
           got[i] = 0; withdraw_later(i, cd[i], 1)
        :: FAULT -> fault(); printf("c%d: acquire fails before it runs\n", i); withdraw_later(i, cd[i], 1)
        :: FAULT -> fault(); printf("c%d: acquire times out; it may still run\n", i);
           ghost[i] = 1; gage[i] = 0; withdraw_later(i, cd[i], TTL + LIFE)
        fi }
    :: atomic { pc[i] == C_FREE && maxtok >= MAXTOK -> pc[i] = C_DONE }
    :: atomic { pc[i] == C_ACQ ->
        if
        :: rlost[i] -> printf("c%d: acquire's reply lost in the server crash\n", i);
           rlost[i] = 0; got[i] = 0; withdraw_later(i, cd[i], 1)
        :: !rlost[i] && got[i] && ARRIVES(i) ->                  /* new TableLease(..., sent): start() */
            held[i] = 1; vu[i] = cd[i]; cd[i] = 0; pc[i] = C_HOLD;
            printf("c%d: acquire returns token %d, valid for %d ticks\n", i, tok[i], vu[i]);
            assert(vu[i] > 0);                                   /* arrival */
            assert(brk[i] || tok[i] > handed);                   /* fencing: hand-out order */
            if :: tok[i] > handed -> handed = tok[i] :: else fi;
            check_mutex()
        :: !rlost[i] && got[i] && !ARRIVES(i) ->                 /* invalid on arrival: released, thrown */
            printf("c%d: invalid on arrival, given back\n", i);
            srv_release(i); let_go(i, TTL + LIFE); FREE(i)
        :: !rlost[i] && !got[i] -> FREE(i)                       /* busy: wait for NOTIFY or poll */
        fi }

    /* TableLease.renewInStore; validity from its send only if it answered one row */
    :: atomic { pc[i] == C_HOLD && VALID(i) && !bat[i] ->     /* LeaseRenewals.renew waits for one in flight */
        cd[i] = VAL;
        if
        :: srv_renew(i); pc[i] = C_REN
        :: FAULT -> fault(); srv_renew(i); printf("c%d: renewal ran (%d), reply lost\n", i, got[i]);
           got[i] = 0; unk[i] = 1; ucd[i] = cd[i]; cd[i] = 0
        :: FAULT -> fault(); printf("c%d: renewal fails before it runs\n", i); unk[i] = 1; ucd[i] = cd[i]; cd[i] = 0
        fi }
    :: atomic { pc[i] == C_REN ->
        if
        :: rlost[i] -> printf("c%d: renewal's reply lost in the server crash\n", i);
           unk[i] = 1; ucd[i] = cd[i]; pc[i] = C_HOLD
        :: !rlost[i] && got[i] && held[i] -> if :: cd[i] > vu[i] -> vu[i] = cd[i] :: else fi;
           unk[i] = 0; ucd[i] = 0;
           printf("c%d: renewed, valid for %d ticks\n", i, vu[i]); check_mutex(); pc[i] = C_HOLD
        :: !rlost[i] && got[i] && !held[i] -> unk[i] = 0; ucd[i] = 0; pc[i] = C_HOLD   /* the deadline fired meanwhile */
        :: !rlost[i] && !got[i] -> printf("c%d: renewal: 0 rows, lost\n", i); FREE(i)   /* taken over or broken */
        fi;
        cd[i] = 0; got[i] = 0; rlost[i] = 0 }
    /* LeaseRenewals.collect: another lease's heartbeat sends a statement that carries this one early */
    :: atomic { i < CARRIED && pc[i] == C_HOLD && VALID(i) && !bat[i] ->
        bid[i] = ID(i); bcd[i] = VAL; bage[i] = 0; bran[i] = 0; bgot[i] = 0; blost[i] = 0;
        if
        :: renew_row(bid[i], bgot[i]); bran[i] = 1; bat[i] = 1  /* runs now, answers later */
        :: bat[i] = 1                                            /* runs later, within LIFE, as it answers */
        :: FAULT -> fault(); renew_row(bid[i], bgot[i]); printf("c%d: a batch carrying it ran (%d), reply lost\n", i, bgot[i]);
           unk[i] = 1; ucd[i] = VAL; bgot[i] = 0                 /* recordInStore: outcome unknown */
        :: FAULT -> fault(); printf("c%d: a batch carrying it fails before it runs\n", i); unk[i] = 1; ucd[i] = VAL
        fi }
    /* its answer: recordInStore, then tell() -> renew() if the lease is still this one and held */
    :: atomic { bat[i] ->
        if :: !bran[i] -> renew_row(bid[i], bgot[i]); bran[i] = 1 :: else fi;
        printf("c%d: the batch carrying lease %d answers (%d)\n", i, bid[i], bgot[i]);
        if
        :: pc[i] == C_HOLD && ID(i) == bid[i] && blost[i] -> unk[i] = 1; ucd[i] = bcd[i]
        :: pc[i] == C_HOLD && ID(i) == bid[i] && !blost[i] && bgot[i] && held[i] ->
#ifdef BUG_BATCH_FROM_ANSWER
           vu[i] = VAL;
#else
           if :: bcd[i] > vu[i] -> vu[i] = bcd[i] :: else fi;
#endif
           unk[i] = 0; ucd[i] = 0;
           printf("c%d: renewed by a batch, valid for %d ticks\n", i, vu[i]); check_mutex()
        :: pc[i] == C_HOLD && ID(i) == bid[i] && !blost[i] && bgot[i] && !held[i] -> unk[i] = 0; ucd[i] = 0
        :: pc[i] == C_HOLD && ID(i) == bid[i] && !blost[i] && !bgot[i] && held[i] ->
           printf("c%d: a batch did not return its row: lost\n", i); FREE(i)
        :: else                                                  /* released or lost meanwhile: renew() refuses */
        fi;
        bat[i] = 0; bran[i] = 0; bgot[i] = 0; blost[i] = 0; bcd[i] = 0; bage[i] = 0 }

    /* the deadline fired (ManagedLease: reason EXPIRED): TableLease.onLost */
    :: atomic { pc[i] == C_HOLD && !held[i] ->
        if
        :: unk[i] && ucd[i] > 0 -> printf("c%d: lost; withdrawing what a renewal may have added\n", i);
#ifdef BUG_NO_RENEW_WITHDRAW
           let_go(i, 1); FREE(i)
#else
           withdraw_later(i, ucd[i], 1)
#endif
        :: else -> let_go(i, TTL + LIFE); FREE(i)
        fi }

    /* release(): the lease turns invalid, then one statement */
    :: atomic { pc[i] == C_HOLD && held[i] ->
        held[i] = 0; vu[i] = 0;
        if
        :: srv_release(i);
           if
           :: got[i] -> printf("c%d: released\n", i); assert(!LIVE(i)); let_go(i, TTL + LIFE); FREE(i)
           :: else -> printf("c%d: release: 0 rows, LeaseLostException\n", i); FREE(i)
           fi
        :: FAULT -> fault(); srv_release(i); got[i] = 0; printf("c%d: release ran, reply lost: retried in the background\n", i);
           let_go(i, TTL + LIFE); pc[i] = C_RETRY
        :: FAULT -> fault(); printf("c%d: release fails: retried in the background\n", i);
           let_go(i, TTL + LIFE); pc[i] = C_RETRY
        fi }
    :: atomic { pc[i] == C_RETRY -> srv_release(i); got[i] = 0; FREE(i) }   /* 0 rows: a loss, swallowed */

    /* withdrawLater: a release conditional on our lease id, retried until the window ends */
    :: atomic { pc[i] == C_WD && wwin[i] > 0 ->
        wdue[i] = 0; srv_release(i);
        if
        :: got[i] -> printf("c%d: withdrawn\n", i); FREE(i)
        :: else                                                  /* 0 rows: it may still land; go on */
        fi;
        got[i] = 0 }
    :: atomic { pc[i] == C_WD && wwin[i] > 0 && FAULT -> fault(); wdue[i] = 0; relax(i);
        printf("c%d: a withdrawal try fails\n", i) }
    :: atomic { pc[i] == C_WD && wwin[i] == 0 -> FREE(i) }

    :: atomic { crashes_left > 0 && pc[i] != C_DEAD ->
        crashes_left--; printf("c%d crashes\n", i);
        held[i] = 0; vu[i] = 0; wdue[i] = 0; relax(i); pc[i] = C_DEAD }
    od
}

/* the server's clock, a late acquisition, the operator's break, a server crash */
active proctype Server() {
end_server:
    do
    :: atomic { !wdue[0] && !wdue[1] && !wdue[2] && !OVERDUE(0) && !OVERDUE(1) && !OVERDUE(2) ->
        for (k : 0 .. N - 1) {
            if :: vu[k] > 0 -> vu[k]-- :: else fi;
            if :: cd[k] > 0 -> cd[k]-- :: else fi;
            if :: ucd[k] > 0 -> ucd[k]-- :: else fi;
            if :: bcd[k] > 0 -> bcd[k]-- :: else fi;
            if :: bat[k] && !bran[k] -> bage[k]++ :: else fi;
            if :: wwin[k] > 0 -> wwin[k]-- :: else fi;
            if :: held[k] && vu[k] == 0 -> held[k] = 0 :: else fi;
            if :: ghost[k] -> gage[k]++; if :: gage[k] > LIFE -> ghost[k] = 0; gage[k] = 0 :: else fi :: else fi;
            if
            :: gone[k] > 0 && LIVE(k) -> gage2[k]++; assert(gage2[k] <= gone[k])   /* blocking */
            :: gone[k] > 0 && !MAYLIVE(k) && !ghost[k] && pc[k] != C_RETRY ->
                gone[k] = 0; gage2[k] = 0                        /* it cannot block again */
            :: else
            fi
        }
        k = 0;
        if :: rexp > 0 -> rexp-- :: else fi;
        if :: dexp > 0 -> dexp-- :: else fi;
        printf("-- tick: valid for c0 %d, c1 %d, c2 %d; row: lease %d, %d ticks left, token %d\n",
               VALID(0) * vu[0], VALID(1) * vu[1], VALID(2) * vu[2], rlid, rexp, rtok) }
    :: atomic { ghost[0] || ghost[1] || ghost[2] ->
        select (k : 0 .. N - 1);
        if
        :: ghost[k] -> ghost[k] = 0; gage[k] = 0; srv_acquire(k); printf("c%d's late acquire runs (%d)\n", k, got[k]);
           got[k] = 0; tok[k] = 0
        :: else
        fi;
        k = 0 }
    :: atomic { forces_left > 0 && rlid != NOBODY && rexp > 0 ->
        forces_left--; printf("operator breaks the lease of c%d\n", rlid / 4);
        k = rlid / 4; brk[k] = 1; k = 0; rlid = NOBODY; rexp = 0; durable() }
    :: atomic { srv_left > 0 ->
        srv_left--; printf("the server crashes: unflushed commits undone, replies lost\n");
        rlid = dlid; rexp = dexp; rtok = dtok; dirty = 0;
        for (k : 0 .. N - 1) {
            if :: pc[k] == C_ACQ || pc[k] == C_REN -> rlost[k] = 1 :: else fi;
            if :: bat[k] -> blost[k] = 1; bran[k] = 1 :: else fi;    /* it ran, or never will: unknown */
            ghost[k] = 0; gage[k] = 0;
            if :: gone[k] > 0 && LIVE(k) -> relax(k) :: else fi  /* a release or withdrawal undone: held until it expires */
        }
        k = 0 }
    od
}

init {
    atomic { run Client(0); run Client(1); run Client(2) }
}
