/*
 * PostgreSQL mode=advisory (lock-postgres: AdvisoryLockManager, AdvisoryLease, AdvisorySessions,
 * SessionWatch), one key, for spin 6.5. docs/model-checking.md says what this proves and what it
 * abstracts.
 *
 * Time as in lease-engine.pml: one tick is TTL/5, TTL is 5 ticks; a lease is valid for 4 local
 * ticks after the send of the statement that granted or last confirmed it, which on the slowest
 * clock allowed (DRIFT 5: 20 % slow) lasts VAL = 5 store ticks.
 *
 * The server: one advisory lock id, granted to one session at a time; a session per client. Each
 * statement that arrives restarts the session's idle timer; the server ends a session idle for
 * IDLE = TTL + TTL/5 ticks (AdvisorySessions: idle_session_timeout), and an operator may
 * terminate one (pg_terminate_backend) TERMS times. A restart (RESTARTS times) ends every session
 * and opens the restart window: for the longest TTL of the schema (here TTL) the key, recorded
 * before the restart, is refused (AdvisorySql's guard). The server tells a client that can hear it
 * why its session ended (a word on the idle connection); a client may be cut off and hear nothing.
 * A statement is applied in the step that sends it (arriving later only restarts the idle timer
 * later); its reply comes any number of ticks later, or is lost (FAULTS).
 *
 * Properties (assertions):
 *   mutex   never two clients whose lease is valid by Lease.isValid(); a lease whose session an
 *           operator terminated is exempt until it notices (the documented residual window)
 *   notice  a holder that can hear the server notices a server-ended session (SessionWatch, every
 *           250 ms, well within a tick) before the next tick
 *   arrival a lease is never handed out invalid on arrival
 *
 * Bugs put back with -D (each must fail a property; scripts/model-check.sh):
 *   BUG_NO_RESTART_GUARD  after a restart the key is granted at once
 *   BUG_IDLE_TTL_MINUS    idle_session_timeout of TTL - TTL/5 instead of TTL + TTL/5
 *   BUG_VALID_FROM_REPLY  validity counted from the grant's reply instead of the try's send
 *   BUG_NO_WATCH          no SessionWatch: a server-ended session is noticed at the next renewal only
 */

#define N       3
#define TTL     5
#define VAL     5                /* 4 local ticks at the slowest clock (see lease-engine.pml) */
#ifdef BUG_IDLE_TTL_MINUS
#define IDLE    (TTL - 1)
#else
#define IDLE    (TTL + 1)        /* TTL + TTL/5 */
#endif
#ifndef FAULTS
#define FAULTS   1
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif
#ifndef TERMS
#define TERMS    1
#endif
#ifndef CUTS
#define CUTS     1               /* clients cut off from the server (for good) */
#endif
#ifndef GRANTS
#define GRANTS   3               /* grants explored */
#endif
#define NOBODY  255

/* client steps */
#define C_FREE   0               /* no lease: may try */
#define C_TRY    1               /* the try (pg_try_advisory_lock) was applied; its reply is on its way */
#define C_HOLD   2               /* holding: renew, release, or run out */
#define C_RENEW  3               /* the renewal query (pg_locks) was applied; its reply is on its way */
#define C_LOST   4               /* lost: the session is closed a full TTL after the last renewal, or sooner */
#define C_DONE   5               /* the model's grant bound reached */

byte holder = NOBODY;            /* the session holding the advisory lock */
bool sess[N];                    /* the server's session of client i is open */
byte idle[N];                    /* ticks until the server ends it for idleness */
bool word[N];                    /* the server ended it and told the client: SessionWatch can read it */
bool deaf[N];                    /* the client is cut off: it hears nothing from the server */
byte window;                     /* restart window: ticks it still lasts (server clock) */
bool recorded;                   /* the key's row exists (from the first grant on, for good) */

byte pc[N];
bool held[N];                    /* ManagedLease state HELD */
byte vu[N];                      /* ticks of validity left; 0: invalid */
byte cd[N];                      /* the statement in flight: VAL - ticks since its send */
bool got[N];                     /* its answer: the lock was granted / is still held */
bool terminated[N];              /* the operator ended this lease's session: exempt until noticed */

byte faults_left = FAULTS;
byte restarts_left = RESTARTS;
byte terms_left = TERMS;
byte cuts_left = CUTS;
byte grants;
byte k, cnt;

#define VALID(c) (held[c] && vu[c] > 0)

inline check_mutex() {
    cnt = 0;
    for (k : 0 .. N - 1) { if :: VALID(k) && !terminated[k] -> cnt++ :: else fi }
    assert(cnt <= 1);
    cnt = 0; k = 0
}

/* the server ends client c's session: its lock is free */
inline end_session(c) {
    sess[c] = 0; idle[c] = 0;
    if :: holder == c -> holder = NOBODY :: else fi;
    if :: !deaf[c] -> word[c] = 1 :: else fi
}

/* the client closes (or discards) its session: the close reaches the server unless the client is
   cut off, or the close itself is lost (FAULTS); then the server's idle limit ends the session, and
   the client opens no new one before (one session per client in the model) */
inline close_session(i) {
    if
    :: sess[i] && !deaf[i] -> sess[i] = 0; idle[i] = 0; if :: holder == i -> holder = NOBODY :: else fi
    :: sess[i] && !deaf[i] && faults_left > 0 -> faults_left--; printf("c%d: the close is lost\n", i)
    :: else
    fi
}

/* the lease of client i has ended; the connection goes back to the pool or is discarded */
inline drop(i) {
    held[i] = 0; vu[i] = 0; cd[i] = 0; got[i] = 0; terminated[i] = 0; word[i] = 0
}

proctype Client(byte i) {
end_client:
    do
    /* AdvisoryLockManager: the try, on a session of the pool (opened if none; limits set) */
    :: atomic { pc[i] == C_FREE && grants < GRANTS && !sess[i] && !deaf[i] ->
        sess[i] = 1; word[i] = 0; idle[i] = IDLE; cd[i] = VAL;
        got[i] = (holder == NOBODY);
#ifndef BUG_NO_RESTART_GUARD
        if :: window > 0 && recorded -> got[i] = 0 :: else fi;   /* a key held before the restart */
#endif
        if :: got[i] -> holder = i; recorded = 1; grants++ :: else fi;
        printf("c%d: try: %d\n", i, got[i]);
        pc[i] = C_TRY }
    :: atomic { pc[i] == C_FREE && (grants >= GRANTS || deaf[i]) -> pc[i] = C_DONE }
    :: atomic { pc[i] == C_TRY ->                                /* the reply */
        if
        :: got[i] && cd[i] > 0 ->
#ifdef BUG_VALID_FROM_REPLY
            vu[i] = VAL;
#else
            vu[i] = cd[i];                                       /* validFromNanos: the try's send */
#endif
            held[i] = 1; cd[i] = 0; pc[i] = C_HOLD;
            printf("c%d: acquire returns, valid for %d ticks\n", i, vu[i]);
            assert(vu[i] > 0);                                   /* arrival */
            check_mutex()
        :: got[i] && cd[i] == 0 -> close_session(i); drop(i); pc[i] = C_FREE   /* invalid on arrival: given back */
        :: !got[i] -> close_session(i); drop(i); pc[i] = C_FREE  /* back to the pool: modelled as closed */
        fi }
    :: atomic { pc[i] == C_TRY && faults_left > 0 ->             /* reply lost: the session is discarded */
        faults_left--; printf("c%d: try's reply lost; session discarded\n", i);
        close_session(i); drop(i); pc[i] = C_FREE }

    /* AdvisoryLease.renewInStore: one query on the pinned session */
    :: atomic { pc[i] == C_HOLD && VALID(i) ->
        cd[i] = VAL;
        if :: sess[i] && !deaf[i] -> idle[i] = IDLE; got[i] = (holder == i) :: else -> got[i] = 0 fi;
        pc[i] = C_RENEW }
    :: atomic { pc[i] == C_RENEW ->
        if
        :: got[i] && held[i] ->
            if :: cd[i] > vu[i] -> vu[i] = cd[i] :: else fi;
            printf("c%d: renewed, valid for %d ticks\n", i, vu[i]);
            check_mutex(); pc[i] = C_HOLD
        :: got[i] && !held[i] -> pc[i] = C_LOST                  /* the deadline fired meanwhile */
        :: !got[i] -> held[i] = 0; vu[i] = 0; pc[i] = C_LOST     /* session gone or lock not held: lost at once */
        fi;
        cd[i] = 0; got[i] = 0 }
    :: atomic { pc[i] == C_RENEW && faults_left > 0 ->           /* no answer: nothing extended */
        faults_left--; cd[i] = 0; got[i] = 0; pc[i] = C_HOLD }

    /* release: unlock, or close the session if that fails (either frees the lock) */
    :: atomic { pc[i] == C_HOLD && held[i] ->
        close_session(i); drop(i); pc[i] = C_FREE }

    /* the deadline (Heartbeats timer) */
    :: atomic { pc[i] == C_HOLD && held[i] && vu[i] == 0 -> held[i] = 0; pc[i] = C_LOST }
    :: atomic { pc[i] == C_HOLD && !held[i] -> pc[i] = C_LOST }
    /* lost: the manager closes the session (a full TTL after the last renewal; any time after the loss is safe) */
    :: atomic { pc[i] == C_LOST -> close_session(i); drop(i); pc[i] = C_FREE }

#ifndef BUG_NO_WATCH
    /* SessionWatch: reads what the server sent on the session of a held lease */
    :: atomic { word[i] && held[i] -> printf("c%d: SessionWatch: session ended\n", i); held[i] = 0; vu[i] = 0; word[i] = 0 }
#endif
    :: atomic { word[i] && !held[i] -> word[i] = 0 }
    od
}

/* the server's clock, idle limit, restarts, and an operator's pg_terminate_backend */
active proctype Server() {
end_server:
    do
    :: atomic {
#ifndef BUG_NO_WATCH
        !(word[0] && held[0]) && !(word[1] && held[1]) && !(word[2] && held[2]) ->   /* the watch's 250 ms sweep */
#endif
        for (k : 0 .. N - 1) {
            assert(!(word[k] && held[k] && vu[k] > 0));          /* notice: noticed within the sweep */
            if :: vu[k] > 0 -> vu[k]-- :: else fi;
            if :: cd[k] > 0 -> cd[k]-- :: else fi;
            if :: held[k] && vu[k] == 0 -> held[k] = 0 :: else fi;
            if
            :: sess[k] && idle[k] > 0 -> idle[k]--; if :: idle[k] == 0 -> end_session(k) :: else fi
            :: else
            fi
        }
        k = 0;
        if :: window > 0 -> window-- :: else fi;
        printf("-- tick: valid for c0 %d, c1 %d, c2 %d; lock held by %d\n", VALID(0) * vu[0], VALID(1) * vu[1],
               VALID(2) * vu[2], holder) }
    :: atomic { restarts_left > 0 ->
        restarts_left--; printf("server restarts\n");
        for (k : 0 .. N - 1) { if :: sess[k] -> end_session(k) :: else fi }
        k = 0; window = TTL }
    :: atomic { terms_left > 0 && holder != NOBODY ->
        terms_left--; printf("operator terminates the session of c%d\n", holder);
        k = holder; terminated[k] = 1; end_session(k); k = 0 }
    :: atomic { cuts_left > 0 -> cuts_left--; select (k : 0 .. N - 1); deaf[k] = 1; printf("c%d is cut off for good\n", k); k = 0 }
    od
}

init {
    atomic { run Client(0); run Client(1); run Client(2) }
}
