/*
 * Azure mode=lease (lock-azure: AzureLeaseLockManager, AzureLease, HolderMetadata; leases managed by
 * dev.latchkey.spi.ManagedLease), one key, for spin 6.5. docs/model-checking.md says what this
 * proves, for which bounds, and what it abstracts.
 *
 * Time as in lease-engine.pml: one tick is TTL/5 (the safety margin), TTL (the lease duration) is
 * 5 ticks; a lease is valid for 4 ticks of its client's clock after the send of its acquisition
 * or of its last renewal known to have landed, which on the slowest clock allowed (DRIFT 5: 20 %
 * slow) lasts VAL = 5 server ticks.
 *
 * The server (Azure's blob lease, by the server's clock): the lease id of the last lease (a client
 * proposes its own; one live lease id per client, see below), its state (available, leased,
 * expired, broken) and the ticks until it expires. Azure's rules, as the code relies on them:
 * acquire succeeds unless another id holds a live lease (409 LeaseAlreadyPresent) and restarts the
 * timer; renew succeeds for the last id while leased or expired (and not leased again since),
 * restarting the timer, and fails on a broken lease (LeaseIsBrokenAndCannotBeRenewed) or another
 * id; release by the last id succeeds unless the lease is already available (so the old id *can*
 * release a broken lease: AzureLease renews first); break (forceRelease, period 0) ends a live
 * lease. The blob's metadata holds the holder record: the lease id it names, the fencing token,
 * and its ETag (ver), which every metadata write moves; a metadata write needs our live lease and
 * the ETag read before it (If-Match). An acquisition's reply carries the blob's ETag (lease
 * operations leave it alone). Each client remembers the ETag and token of the record of its last
 * lease whose release returned normally (AzureLeaseLockManager.released); its next attempt takes that
 * memory, and when the acquisition's ETag is the remembered one it skips the properties read and
 * writes the remembered token plus one against that ETag.
 *
 * A request is applied in the step that sends it; its reply comes any number of ticks later (the
 * acquisition and a renewal), or is lost. Faults, while the budget FAULTS lasts: an acquisition
 * lands and its reply is lost, fails before landing, or times out and lands up to LIFE ticks
 * later; a properties read fails; a holder record lands and its reply is lost (exception), or
 * lands and the SDK's retry answers 412; a holder record fails before landing; a renewal lands or
 * not, its reply lost; a release's renew or release fails, or its release lands and the SDK's
 * retry answers 409; a withdrawal's release fails; an operator corrupts the recorded token. CRASHES
 * clients may die at any point; an operator breaks the lease FORCES times.
 *
 * Properties (assertions):
 *   mutex     never two clients whose lease is valid by their own clock (HELD, deadline not
 *             passed, margin included); a lease broken by forceRelease is exempt until its holder
 *             notices (the documented residual window)
 *   fencing   every holder record that lands carries a greater token than every one before it,
 *             and leases are handed out in token order (a lease broken before hand-out excepted)
 *   arrival   acquire never hands out a lease that is invalid on arrival (ManagedLease.start)
 *   released  when release() returns, no lease of ours holds the key at the server
 *   honest    release() throws LeaseLostException only if no release of ours landed (a release
 *             whose reply was lost is not reported as a loss)
 *   blocking  (bounded monitors) a lease its client let go of stops blocking the key (a live lease
 *             of its id at the server): an acquisition whose outcome is unknown and that had landed
 *             when acquire threw, within 1 tick while the withdrawal met no fault (its first try is
 *             100 ms after the throw: before the next tick); a crashed holder's, a late landing's,
 *             and one whose release threw, within TTL + LIFE ticks
 *
 * Bugs put back with -D (each must fail a property; scripts/model-check.sh):
 *   BUG_NO_WITHDRAW        an acquisition whose outcome is unknown is not withdrawn, and a failed
 *                          claim's lease is released once, quietly (before 31fca7b)   -> blocking
 *   BUG_RELEASE_409_LOST   a 409 to our release (the SDK's retry of a release that landed), or
 *                          "not ours" after a release of ours may have landed, is a loss
 *                          (before 31fca7b)                                            -> honest
 *   BUG_CORRUPT_TOKEN_ZERO a recorded token that is not a number reads as 0 (before 6fe06ac)
 *                                                                                      -> fencing
 *   BUG_INVALID_ON_ARRIVAL ManagedLease.start() hands out a lease already past its deadline
 *                          (before 26a3adc)                                            -> arrival
 *   BUG_REMEMBERED_UNCHECKED a re-take trusts the remembered token without checking that the
 *                          acquisition's ETag is the remembered one, writing against the ETag the
 *                          acquisition answered (a design choice reversed; tokens 1-3) -> fencing
 * Model sensitivity (not a code bug): DRIFT=4 (drift beyond the margin) must fail mutex.
 */

#define N       3
#define TTL     5
#define MARGIN  1
#ifndef DRIFT
#define DRIFT   5
#endif
#define VAL     (((TTL - MARGIN) * DRIFT + DRIFT - 2) / (DRIFT - 1))   /* ceil(4 * DRIFT / (DRIFT - 1)) */
#define LIFE    1                /* an acquisition that timed out lands within LIFE ticks, or never */
#ifndef MAXTOK
#define MAXTOK  2                /* holder records explored: tokens 1..MAXTOK */
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
#define NOBODY  255
#define NONE    255

/* the server's lease state */
#define L_AVAIL   0
#define L_LEASED  1
#define L_EXPIRED 2
#define L_BROKEN  3

/* where a client is */
#define C_FREE   0               /* AzureLeaseLockManager.attempt may start */
#define C_ACQ    1               /* acquireLease: the acquisition was applied; its reply is on its way */
#define C_READ   2               /* claim(): read the properties (token, ETag, mode marker) */
#define C_CLAIM  3               /* claim(): the holder record (If-Match ETag, our lease id) was applied */
#define C_RB     4               /* claim() after 412: read the record back; ours if it names us and our lease renews */
#define C_HOLD   5               /* held: renew, release, or run out */
#define C_REN    6               /* AzureLease.renewInStore: the renewal was applied; its reply is on its way */
#define C_REL    7               /* AzureLease.releaseInStore: renew, then release */
#define C_RETRY  8               /* LeaseRelease.retryReleaseLater */
#define C_WD     9               /* withdrawLater: release by our lease id, until confirmed or the TTL passed */
#define C_DEAD   10
#define C_DONE   11              /* the model's token bound reached */

byte lh = NOBODY;                /* the server: the last lease id (a client: one live lease id each) */
byte ls = L_AVAIL;
byte lexp;                       /* ticks until the lease expires */
byte rtok;                       /* the holder record: its token (the true last one, also when corrupt) */
byte rlid = NOBODY;              /* the lease id it names */
byte ver;                        /* its ETag: every metadata write moves it */
bool corrupt;                    /* its token is not a number */
byte handed;                     /* the greatest token handed out */
byte claims;                     /* holder records landed */

byte pc[N];
byte gen[N];                     /* which of three lease ids the current attempt uses: one no one names */
bool held[N];                    /* ManagedLease state HELD */
byte vu[N];                      /* ticks of validity left */
byte cd[N];                      /* the validity the request in flight gives: VAL - ticks since its send */
bool got[N];                     /* the applied request's answer */
byte rv[N];                      /* the ETag the claim's If-Match names */
byte rt[N];                      /* the last token as the claim knows it (read, or remembered) */
byte tok[N];
byte av[N];                      /* the ETag the acquisition's reply carries */
byte mv[N];                      /* the ETag of this lease's holder record (as it landed, or as read back) */
byte cv[N];                      /* AzureLeaseLockManager.released: the remembered record's ETag (NONE: none) */
byte ct[N];                      /* ... and its token */
bool brk[N];                     /* its lease was broken: exempt from mutex until it notices */
bool relsent[N];                 /* AzureLease.releaseSent */
bool rel_landed[N];              /* a release of this lease landed (the model's knowledge) */
bool granted[N];                 /* the withdrawal's lease was surely granted */
byte wwin[N];                    /* the withdrawal's window: TTL since the acquisition's send */
bool wdue[N];                    /* a withdrawal try is due (runs before the next tick) */
bool ghost[N];                   /* a late acquisition on its way */
byte gage[N];
byte gone[N];                    /* the blocking monitor: bound in ticks (0: not let go) */
byte gage2[N];                   /* ticks the let-go lease has blocked the key */

byte faults_left = FAULTS;
byte crashes_left = CRASHES;
byte forces_left = FORCES;
byte k, cnt;

#define VALID(c) (held[c] && vu[c] > 0)
#define ID(c)    ((c) * 3 + gen[c])  /* the lease id of client c's current attempt (a fresh UUID in the code) */
#define LIVE(c)  (lh == ID(c) && ls == L_LEASED)
#define FAULT    (faults_left > 0)
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

/* the server's lease operations for lease id c; got: 2xx */
inline srv_acquire(c) {
    if
    :: ls != L_LEASED || lh == ID(c) -> lh = ID(c); ls = L_LEASED; lexp = TTL; got[c] = 1; av[c] = ver
    :: else -> got[c] = 0                                        /* 409 LeaseAlreadyPresent */
    fi
}
inline srv_renew(c) {
    if
    :: lh == ID(c) && (ls == L_LEASED || ls == L_EXPIRED) -> ls = L_LEASED; lexp = TTL; got[c] = 1
    :: else -> got[c] = 0
    fi
}
inline srv_release(c) {
    if
    :: lh == ID(c) && ls != L_AVAIL -> ls = L_AVAIL; lh = NOBODY; got[c] = 1
    :: else -> got[c] = 0                                        /* 409 */
    fi
}

/* back to AzureLeaseLockManager's loop (or the caller): nothing of this attempt is left in the client */
inline FREE(c) {
    pc[c] = C_FREE; held[c] = 0; vu[c] = 0; cd[c] = 0; got[c] = 0; rv[c] = 0; rt[c] = 0; tok[c] = 0; brk[c] = 0;
    av[c] = 0; mv[c] = 0;
    relsent[c] = 0; rel_landed[c] = 0; granted[c] = 0; wwin[c] = 0; wdue[c] = 0
}

/* releaseInStore returned normally: the manager remembers this lease's record (onReleased) */
inline remember(c) { cv[c] = mv[c]; ct[c] = tok[c] }
inline forget(c) { cv[c] = NONE; ct[c] = 0 }

/* a fresh lease id: one that neither the server's lease nor the holder record names */
inline new_id(c) {
    gen[c] = 0;
    do
    :: ID(c) == lh || ID(c) == rlid -> gen[c]++
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

/* withdrawLater(leases, ..., granted, delay): the first try before the next tick */
inline withdraw_later(c, sure, bound) {
#ifdef BUG_NO_WITHDRAW
    let_go(c, bound); FREE(c)
#else
    granted[c] = sure; wdue[c] = 1; wwin[c] = cd[c]; cd[c] = 0; let_go(c, bound); pc[c] = C_WD
#endif
}

/* giveBack: one release now if the store answered, else (or if that fails) in the background */
inline give_back(c, unknown) {
    if
    :: !unknown ->
        srv_release(c);
        FREE(c)                                           /* released, or 409: none of ours left */
    :: !unknown && FAULT ->                                     /* that release fails */
        fault(); printf("c%d: giving the lease back fails\n", c);
#ifdef BUG_NO_WITHDRAW
        let_go(c, TTL + LIFE); FREE(c)                   /* releaseQuietly: once */
#else
        withdraw_later(c, 1, TTL + LIFE)
#endif
    :: unknown ->
#ifdef BUG_NO_WITHDRAW
        srv_release(c); let_go(c, TTL + LIFE); FREE(c)    /* releaseQuietly: once */
#else
        withdraw_later(c, 1, 1)
#endif
    fi
}

/* the lease is handed out (new AzureLease(..., sent).begin(), ManagedLease.start()) */
inline hand_out(c) {
    if
    :: ARRIVES(c) ->
        held[c] = 1; vu[c] = cd[c]; cd[c] = 0; pc[c] = C_HOLD;
        printf("c%d: acquire returns token %d, valid for %d ticks\n", c, tok[c], vu[c]);
        assert(vu[c] > 0);                                       /* arrival */
        assert(brk[c] || tok[c] > handed);                       /* fencing: hand-out order */
        if :: tok[c] > handed -> handed = tok[c] :: else fi;
        check_mutex()
    :: else ->                                                   /* invalid on arrival: given back (releaseInStore), thrown */
        printf("c%d: invalid on arrival, given back\n", c);
        srv_renew(c); if :: got[c] -> srv_release(c); remember(c) :: else fi;
        if :: LIVE(c) -> let_go(c, TTL + LIFE) :: else fi;
        FREE(c)
    fi
}

proctype Client(byte i) {
end_client:
    do
    /* attempt: acquireLease, applied when sent (with a fresh lease id: the last one is dead) */
    :: atomic { pc[i] == C_FREE && claims < MAXTOK && !LIVE(i) && !ghost[i] ->   /* our last lease id is dead */
        new_id(i); gone[i] = 0; gage2[i] = 0; cd[i] = VAL;
        /* released.remove: this attempt takes what was remembered (cv, ct), used only at C_ACQ */
        if
        :: srv_acquire(i); pc[i] = C_ACQ
        :: FAULT -> fault(); srv_acquire(i); printf("c%d: acquire landed (%d), its reply is lost\n", i, got[i]);
           got[i] = 0; av[i] = 0; forget(i); withdraw_later(i, 0, 1)
        :: FAULT -> fault(); printf("c%d: acquire fails before landing\n", i); forget(i); withdraw_later(i, 0, 1)
        :: FAULT -> fault(); printf("c%d: acquire times out; it may land later\n", i);
           ghost[i] = 1; gage[i] = 0; forget(i); withdraw_later(i, 0, TTL + LIFE)
        fi }
    :: atomic { pc[i] == C_FREE && claims >= MAXTOK -> pc[i] = C_DONE }
    :: atomic { pc[i] == C_ACQ ->
        if
#ifdef BUG_REMEMBERED_UNCHECKED
        :: got[i] && cv[i] != NONE -> rv[i] = av[i]; rt[i] = ct[i]; pc[i] = C_CLAIM   /* trusts the remembered token, any ETag */
#else
        :: got[i] && cv[i] != NONE && cv[i] == av[i] -> rv[i] = cv[i]; rt[i] = ct[i]; pc[i] = C_CLAIM   /* as we left it: no read */
#endif
        :: got[i] && !(cv[i] != NONE && cv[i] == av[i]) -> pc[i] = C_READ
        :: else -> FREE(i)                     /* 409: busy, poll again */
        fi;
        av[i] = 0; forget(i) }

    /* claim(): properties, then the holder record under our lease and the ETag read */
    :: atomic { pc[i] == C_READ ->
        if
        :: corrupt ->
#ifdef BUG_CORRUPT_TOKEN_ZERO
            rv[i] = ver; rt[i] = 0; pc[i] = C_CLAIM              /* reads as 0: the next is 1 */
#else
            printf("c%d: the recorded token is not a number: refused\n", i);
            give_back(i, 0); cd[i] = 0                           /* non-retriable: the store answered */
#endif
        :: else -> rv[i] = ver; rt[i] = rtok; pc[i] = C_CLAIM
        fi }
    :: atomic { pc[i] == C_READ && FAULT -> fault(); printf("c%d: properties read fails\n", i); give_back(i, 1); cd[i] = 0 }
    :: atomic { pc[i] == C_CLAIM ->
        if
        :: LIVE(i) && rv[i] == ver ->
            /* the token known (read or remembered) plus one; the ETag held: the record is as known */
            tok[i] = rt[i] + 1;
            assert(tok[i] > rtok);                               /* fencing: every record that lands */
            rtok = tok[i]; rlid = ID(i); ver++; corrupt = 0; claims++; rv[i] = 0; rt[i] = 0; mv[i] = ver;
            if
            :: hand_out(i)
            :: FAULT -> fault(); printf("c%d: holder record landed, reply lost\n", i); give_back(i, 1); cd[i] = 0
            :: FAULT -> fault(); printf("c%d: holder record landed, the SDK's retry answers 412\n", i); pc[i] = C_RB
            fi
        :: else -> rv[i] = 0; rt[i] = 0; pc[i] = C_RB            /* 412/409: the ETag moved or the lease is not ours */
        fi }
    :: atomic { pc[i] == C_CLAIM && FAULT -> fault(); printf("c%d: holder record fails before landing\n", i); give_back(i, 1); cd[i] = 0 }
    :: atomic { pc[i] == C_RB ->
        if
        :: rlid == ID(i) -> mv[i] = ver; srv_renew(i)          /* its ETag as read back */
        :: else -> got[i] = 0
        fi;
        if
        :: got[i] -> hand_out(i)
        :: else -> printf("c%d: broken while claiming\n", i); give_back(i, 0); cd[i] = 0   /* LeaseLostException: null */
        fi }

    /* AzureLease.renewInStore: Azure's renew; validity from its send if it is answered 2xx */
    :: atomic { pc[i] == C_HOLD && VALID(i) ->
        cd[i] = VAL;
        if
        :: srv_renew(i); pc[i] = C_REN
        :: FAULT -> fault(); srv_renew(i); printf("c%d: renewal landed (%d), reply lost\n", i, got[i]); cd[i] = 0
        :: FAULT -> fault(); printf("c%d: renewal fails\n", i); cd[i] = 0
        fi }
    :: atomic { pc[i] == C_REN ->
        if
        :: got[i] && held[i] -> if :: cd[i] > vu[i] -> vu[i] = cd[i] :: else fi;
           printf("c%d: renewed, valid for %d ticks\n", i, vu[i]); check_mutex(); pc[i] = C_HOLD
        :: got[i] && !held[i] -> FREE(i)                  /* the deadline fired meanwhile */
        :: !got[i] -> held[i] = 0; vu[i] = 0; printf("c%d: renewal refused: lost\n", i); FREE(i)
        fi;
        cd[i] = 0; got[i] = 0 }
    :: atomic { pc[i] == C_HOLD && !held[i] -> vu[i] = 0; FREE(i) }   /* the deadline fired */

    /* release(): the lease turns invalid, then releaseInStore: renew, then release */
    :: atomic { pc[i] == C_HOLD && held[i] -> held[i] = 0; vu[i] = 0; pc[i] = C_REL }
    :: atomic { pc[i] == C_REL ->
        srv_renew(i);
        if
        :: got[i] ->
            if
            :: relsent[i] = 1; srv_release(i); rel_landed[i] = rel_landed[i] || got[i];
               if
               :: got[i] -> printf("c%d: released\n", i); assert(!LIVE(i)); remember(i); FREE(i)   /* released */
               :: else ->                                        /* 409 right after our renew */
#ifdef BUG_RELEASE_409_LOST
                  printf("c%d: release throws LeaseLostException\n", i); assert(!rel_landed[i]); FREE(i)
#else
                  assert(!LIVE(i)); remember(i); FREE(i)
#endif
               fi
            :: FAULT -> fault(); relsent[i] = 1; srv_release(i); rel_landed[i] = 1;
               printf("c%d: release landed, the SDK's retry answers 409\n", i);
#ifdef BUG_RELEASE_409_LOST
               printf("c%d: release throws LeaseLostException\n", i); assert(!rel_landed[i]); FREE(i)
#else
               assert(!LIVE(i)); remember(i); FREE(i)
#endif
            :: FAULT -> fault(); relsent[i] = 1; srv_release(i); rel_landed[i] = 1;
               printf("c%d: release landed, reply lost: retried in the background\n", i); let_go(i, TTL + LIFE); pc[i] = C_RETRY
            :: FAULT -> fault(); relsent[i] = 1; printf("c%d: release fails: retried in the background\n", i);
               let_go(i, TTL + LIFE); pc[i] = C_RETRY
            fi
        :: else ->                                               /* LeaseLostException from the renew */
#ifndef BUG_RELEASE_409_LOST
            if
            :: relsent[i] && !(lh == ID(i) && ls == L_BROKEN) -> assert(!LIVE(i)); remember(i); FREE(i)   /* our earlier release landed */
            :: else ->
#endif
               printf("c%d: release throws LeaseLostException\n", i);
               assert(!rel_landed[i]);                           /* honest */
               FREE(i)
#ifndef BUG_RELEASE_409_LOST
            fi
#endif
        fi;
        got[i] = 0 }
    :: atomic { pc[i] == C_REL && FAULT -> fault(); srv_renew(i); got[i] = 0;
        printf("c%d: release's renew fails: retried in the background\n", i); let_go(i, TTL + LIFE); pc[i] = C_RETRY }
    /* retryReleaseLater: releaseInStore again (a loss ends it quietly), or give up (its TTL) */
    :: atomic { pc[i] == C_RETRY ->
        srv_renew(i);
        if
        :: got[i] -> srv_release(i); remember(i)             /* released, or 409 right after our renew */
        :: else -> if :: relsent[i] && !(lh == ID(i) && ls == L_BROKEN) -> remember(i) :: else fi   /* a loss: quietly */
        fi;
        got[i] = 0; FREE(i) }
    :: atomic { pc[i] == C_RETRY && FAULT -> fault(); printf("c%d: background release fails\n", i) }

    /* withdrawLater: release by our lease id; 409 ends it only if the lease was surely granted */
    :: atomic { pc[i] == C_WD && wwin[i] > 0 ->
        wdue[i] = 0; srv_release(i);
        if
        :: got[i] || granted[i] -> printf("c%d: withdrawn\n", i); FREE(i)
        :: else                                                  /* the acquisition may still land: go on */
        fi;
        got[i] = 0 }
    :: atomic { pc[i] == C_WD && wwin[i] > 0 && FAULT -> fault(); wdue[i] = 0; relax(i);
        printf("c%d: a withdrawal try fails\n", i) }
    :: atomic { pc[i] == C_WD && wwin[i] == 0 -> wdue[i] = 0; FREE(i) }   /* gave up: it expires by itself */

    /* a crash, at any point */
    :: atomic { crashes_left > 0 && pc[i] != C_DEAD ->
        crashes_left--; printf("c%d crashes\n", i);
        held[i] = 0; vu[i] = 0; wdue[i] = 0; relax(i); pc[i] = C_DEAD }
    od
}

/* Azure's clock, a late acquisition landing, the operator (break, a corrupted token) */
active proctype Server() {
end_server:
    do
    :: atomic { !wdue[0] && !wdue[1] && !wdue[2] ->
        for (k : 0 .. N - 1) {
            if :: vu[k] > 0 -> vu[k]-- :: else fi;
            if :: cd[k] > 0 -> cd[k]-- :: else fi;
            if :: wwin[k] > 0 -> wwin[k]-- :: else fi;
            if :: held[k] && vu[k] == 0 -> held[k] = 0 :: else fi;  /* the Heartbeats deadline */
            if :: ghost[k] -> gage[k]++; if :: gage[k] > LIFE -> ghost[k] = 0; gage[k] = 0 :: else fi :: else fi;
            if
            :: gone[k] > 0 && LIVE(k) -> gage2[k]++; assert(gage2[k] <= gone[k])   /* blocking */
            :: gone[k] > 0 && !LIVE(k) && !ghost[k] && pc[k] != C_RETRY -> gone[k] = 0; gage2[k] = 0   /* it cannot block again */
            :: else
            fi
        }
        k = 0;
        if
        :: ls == L_LEASED -> lexp--; if :: lexp == 0 -> ls = L_EXPIRED :: else fi
        :: else
        fi;
        printf("-- tick: valid for c0 %d, c1 %d, c2 %d; lease id %d, state %d, %d ticks left\n",
               VALID(0) * vu[0], VALID(1) * vu[1], VALID(2) * vu[2], lh, ls, lexp) }
    :: atomic { ghost[0] || ghost[1] || ghost[2] ->
        select (k : 0 .. N - 1);
        if
        :: ghost[k] -> ghost[k] = 0; gage[k] = 0; srv_acquire(k); printf("c%d's late acquire lands (%d)\n", k, got[k]); got[k] = 0; av[k] = 0
        :: else
        fi;
        k = 0 }
    :: atomic { forces_left > 0 && ls == L_LEASED ->            /* forceRelease(key): properties, then break */
        forces_left--; printf("operator breaks the lease of c%d\n", lh / 3);
        ls = L_BROKEN; lexp = 0; k = lh / 3; brk[k] = 1; k = 0 }
    :: atomic { faults_left > 0 && claims > 0 && !corrupt ->
        faults_left--; printf("operator corrupts the recorded token\n"); corrupt = 1; ver++ }
    od
}

init {
    atomic { cv[0] = NONE; cv[1] = NONE; cv[2] = NONE; run Client(0); run Client(1); run Client(2) }
}
