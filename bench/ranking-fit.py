#!/usr/bin/env python3
"""Chooses the retrieval ranking's constants with one data set left out, on the candidate pools
bench/memory-sets.sh writes with POOL=FILE (every question's 100 best memories with every input of
their score, and each conversation's turns in time).

It ranks each pool again as io.engram.memory.ActivationRanker and ContextSpread do (relevance from
BM25 and similarity, the subject, time and answer-kind boosts, activation and confidence, then the
ten best lending their neighbours in time), for any constants, in a fraction of a second for every
set; then for each set left out it fits the constants on the others (coordinate ascent over a grid,
mean hit@10 of the others, hit@5 and hit@20 breaking near ties) and scores the fit on the one left
out, beside the shipped constants. Only the constants that act on a pool can be chosen here: the
weight of a subject's name inside BM25 changes the pool itself (measure it with RANKING=).

  python3 bench/ranking-fit.py POOL.jsonl [--check] [--each [name ...]] [--fit] [--learn]
                                          [--try name=value,...] [--pair name name ...]

--check prints the shipped constants' figures (compare with bench/memory-sets.sh's own, which
these approximate: production asks 50 hits of each search, the pool 300); --each chooses one
constant at a time with one set left out; --pair two or more of them together; --fit all of them
together; --learn fits a listwise logistic model of the same signals instead (a learned
combination); --try gives the figures of other constants. docs/benchmarks.md has what each gave.
"""
import itertools
import json
import sys
from collections import defaultdict

import numpy as np

# io.engram.memory.RankingWeights.SHIPPED, then variants the server does not have, each at the
# value that leaves the shipped ranking unchanged: fusion (a share of reciprocal-rank fusion in the
# match), length (a prior for longer memories), field (lend a share of what a hit stands above the
# tenth score), lentPlaces (at most that many lent scores count), perLender (neighbours a lender
# lends to), rescore (a share of the similarity from a second model, the rows' sim2 from
# bench/rescore.sh, put on the first model's scale per question), session (a share of the
# similarity to the centroid of the memory's session, the rows' sess from bench/rescore.sh), entity
# (a boost for the share of the question's names the memory names, the rows' ent), turn (a share of
# the similarity to the unit sum of the memory's own vector and its vector embedded after the turn
# before it, the rows' ctx from bench/rescore.sh), coverage (a boost for the share of the question's
# IDF weight the memory's terms match, the rows' cov), absolute (a share of the lexical part taken
# from that coverage instead of BM25 over the best BM25 among the candidates), simBest (a share of
# the similarity divided by the best candidate's, as BM25 is), simSpread (a share taken min-max
# scaled over the candidates: the question's own spread of similarities).
SHIPPED = dict(lexical=0.4, subject=0.15, time=0.3, answerType=0.3, activation=0.2,
               confidence=0.1, spreadShare=0.85, spreadStep=0.8, answerLend=0.9, fusion=0.0,
               length=0.0, field=0.0, lentPlaces=40, perLender=4, rescore=0.0, session=0.0,
               entity=0.0, turn=0.0, coverage=0.0,
               absolute=0.0, simBest=0.0, simSpread=0.0)
GRID = dict(
    lexical=[0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6],
    subject=[0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4],
    time=[0, 0.1, 0.2, 0.3, 0.4, 0.5],
    answerType=[0, 0.1, 0.2, 0.3, 0.4, 0.5],
    activation=[0, 0.1, 0.2, 0.3, 0.4],
    confidence=[0, 0.1, 0.2],
    spreadShare=[0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95],
    spreadStep=[0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
    answerLend=[0, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0],
    fusion=[0, 0.1, 0.2, 0.3, 0.5],
    length=[-0.2, 0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5],
    field=[0, 0.5, 0.8, 0.9, 1.0],
    rescore=[0, 0.2, 0.35, 0.5, 0.75, 1.0],
    session=[0, 0.1, 0.2, 0.3, 0.5],
    entity=[0, 0.1, 0.2, 0.3, 0.5],
    turn=[0, 0.25, 0.5, 0.75, 1.0],
    coverage=[0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0],
    absolute=[0, 0.25, 0.5, 0.75, 1.0],
    simBest=[0, 0.25, 0.5, 0.75, 1.0],
    simSpread=[0, 0.1, 0.25, 0.5, 0.75, 1.0],
)
RRF = 60  # reciprocal rank fusion's constant
CANDIDATES = 50  # hits of each search a retrieval of 10 ranks (MemoryService.MIN_CANDIDATES)
LENDERS, SIDE, WINDOW_MS = 10, 2, 30 * 60 * 1000  # ContextSpread
KS = (5, 10, 20)


class SetPools:
    """One set's questions as padded arrays: a column per memory of a question's pool, and per
    column up to 2 * SIDE neighbours in time (a column of the same question, steps, side)."""

    def __init__(self, name, questions, timelines):
        cols = []  # per question: list of (turn, row or None, in_pool)
        for q in questions:
            line = timelines[(q["set"], q["conversation"])]
            order = line["order"]
            index = line["index"]
            seen = {}
            for row in q["rows"]:
                if row["turn"] in seen:
                    continue
                lr, vr = row["lr"], row["vr"]
                pooled = (lr is not None and lr <= CANDIDATES) or (
                    vr is not None and vr <= CANDIDATES) or row["t"]
                seen[row["turn"]] = (row, pooled)
            q["_cols"] = list(seen.items())
            # Neighbours of every pooled memory (any may be a lender under other constants).
            q["_near"] = {}
            extra = {}
            for turn, (row, pooled) in list(seen.items()):
                if not pooled or turn not in index:
                    continue
                q["_near"][turn] = neighbours(line, index[turn], q["encoded"])
                for near, _, _ in q["_near"][turn]:
                    if near not in seen and near not in extra:
                        extra[near] = None
            q["_cols"] += [(turn, (None, False)) for turn in extra]
            cols.append(q)
        self.name = name
        self.n = len(cols)
        width = max(len(q["_cols"]) for q in cols)
        shape = (self.n, width)
        self.valid = np.zeros(shape, bool)
        self.pooled = np.zeros(shape, bool)
        self.lex = np.zeros(shape)
        self.sim = np.zeros(shape)
        self.sim2 = np.zeros(shape)
        self.sess = np.zeros(shape)
        self.ent = np.zeros(shape)
        self.ctx = np.zeros(shape)
        self.cov = np.zeros(shape)
        self.sim_best = np.zeros(shape)
        self.sim_spread = np.zeros(shape)
        self.rrf = np.zeros(shape)
        self.s = np.zeros(shape)
        self.t = np.zeros(shape)
        self.a = np.zeros(shape)
        self.act = np.zeros(shape)
        self.conf = np.zeros(shape)
        self.chars = np.zeros(shape)
        self.row = np.zeros(shape, bool)
        self.evidence = np.zeros(shape, bool)
        near_target = np.full((self.n, width, 2 * SIDE), -1, int)
        near_steps = np.ones((self.n, width, 2 * SIDE))
        near_answers = np.zeros((self.n, width, 2 * SIDE), bool)
        self.categories = []
        for i, q in enumerate(cols):
            self.categories.append(q["category"])
            column = {turn: j for j, (turn, _) in enumerate(q["_cols"])}
            best = max([r["bm25"] for r, p in (v for _, v in q["_cols"])
                        if r is not None and r["lr"] is not None and r["lr"] <= CANDIDATES]
                       or [1.0])
            asks = timelines[(q["set"], q["conversation"])]["asks"]
            for j, (turn, (row, pooled)) in enumerate(q["_cols"]):
                self.valid[i, j] = True
                self.pooled[i, j] = pooled
                self.evidence[i, j] = turn in q["evidence"]
                if row is not None:
                    if row["lr"] is not None and row["lr"] <= CANDIDATES:
                        self.lex[i, j] = row["bm25"] / best
                    self.sim[i, j] = max(0.0, row["sim"])
                    self.sim2[i, j] = row.get("sim2", row["sim"])
                    self.sess[i, j] = row.get("sess", 0.0)
                    self.ent[i, j] = row.get("ent", 0.0)
                    self.ctx[i, j] = max(0.0, row.get("ctx", row["sim"]))
                    self.cov[i, j] = row.get("cov", 0.0)
                    for rank in (row["lr"], row["vr"]):
                        if rank is not None and rank <= CANDIDATES:
                            self.rrf[i, j] += (RRF + 1) / (RRF + rank) / 2
                    self.s[i, j], self.t[i, j], self.a[i, j] = row["s"], row["t"], row["a"]
                    self.act[i, j], self.conf[i, j] = row["act"], row["conf"]
                    self.chars[i, j] = row.get("chars", 0)
                    self.row[i, j] = True
                for slot, (near, steps, after) in enumerate(q["_near"].get(turn, [])):
                    near_target[i, j, slot] = column[near]
                    near_steps[i, j, slot] = steps
                    near_answers[i, j, slot] = after and steps == 1 and asks.get(turn, False)
            # The second model's similarities on the first's scale: its mean and spread.
            has = self.row[i]
            if has.any():
                a, b = self.sim[i, has], self.sim2[i, has]
                self.sim2[i, has] = a.mean() + (b - b.mean()) / (b.std() or 1.0) * (a.std() or 1.0)
            # The similarity over the best candidate's, and min-max scaled over the candidates.
            sims = self.sim[i, self.pooled[i] & self.row[i]]
            if sims.size:
                top, low = sims.max(), sims.min()
                self.sim_best[i] = self.sim[i] / (top or 1.0)
                self.sim_spread[i] = np.clip((self.sim[i] - low) / ((top - low) or 1.0), 0, 1)
            # A question whose evidence never reaches its pool still counts (as a miss).
        self.near_target, self.near_steps, self.near_answers = near_target, near_steps, near_answers

    def features(self):
        """The inputs a learned combination weighs, one per last axis (FEATURES)."""
        length = np.log1p(self.chars) / np.log(8000)
        return np.stack([self.lex, self.sim, self.rrf, self.s, self.t, self.a, self.act,
                         self.conf, length, np.ones(self.lex.shape)], axis=-1)

    def hits(self, w, own=None):
        """hit@5/10/20 overall and per category of these constants (or of these own scores)."""
        if own is None:
            own = self.own(w)
        return self.spread(w, own)

    def own(self, w):
        sim = (1 - w["rescore"] - w["session"] - w["turn"] - w["simBest"] - w["simSpread"]) * (
            self.sim) + (w["rescore"] * self.sim2 + w["session"] * self.sess + w["turn"] * self.ctx
                         + w["simBest"] * self.sim_best + w["simSpread"] * self.sim_spread)
        lex = (1 - w["absolute"]) * self.lex + w["absolute"] * self.cov
        match = (1 - w["fusion"]) * (w["lexical"] * lex + (1 - w["lexical"]) * sim) + (
            w["fusion"] * self.rrf)
        relevance = match * (1 + w["subject"] * self.s) * (1 + w["time"] * self.t) * (
            1 + w["answerType"] * self.a) * (1 + w["entity"] * self.ent) * (
            1 + w["coverage"] * self.cov)
        if w["length"]:
            relevance = relevance * (1 + w["length"] * np.log1p(self.chars) / np.log(8000))
        return relevance * (1 - w["activation"] - w["confidence"]
                            + w["activation"] * self.act + w["confidence"] * self.conf)

    def spread(self, w, own):
        ranked = np.where(self.pooled, own, -np.inf)
        lenders = np.argsort(-ranked, axis=1, kind="stable")[:, :LENDERS]
        rows = np.arange(self.n)[:, None]
        lender_score = np.take_along_axis(ranked, lenders, axis=1)  # [n, L]
        targets = self.near_target[rows, lenders]  # [n, L, 2 * SIDE]
        factor = np.where(self.near_answers[rows, lenders], w["answerLend"],
                          w["spreadShare"] * w["spreadStep"] ** (self.near_steps[rows, lenders] - 1))
        # The field: the score a memory needs to be among the lenders (0: lend a share of it all).
        field = np.where(np.isfinite(lender_score[:, -1]), lender_score[:, -1], 0.0)[:, None, None]
        field = field * w["field"]
        lent_value = np.where((targets >= 0) & np.isfinite(lender_score)[:, :, None],
                              field + (lender_score[:, :, None] - field) * factor, -np.inf)
        lent = np.full(own.shape, -np.inf)
        qi = np.broadcast_to(rows[:, :, None], targets.shape)
        ok = targets >= 0
        if w["perLender"] < 2 * SIDE:
            # Each lender lends only to its perLender best neighbours: by the share, then by the
            # neighbour's own score.
            own_t = np.where(ok, own[qi, np.maximum(targets, 0)], 0.0)
            key = np.where(ok, lent_value + 1e-3 * own_t, -np.inf)
            rank = np.argsort(np.argsort(-key, axis=2), axis=2)
            ok = ok & (rank < int(w["perLender"]))
        np.maximum.at(lent, (qi[ok], targets[ok]), lent_value[ok])
        # A neighbour joins the candidates with its own score; the ranking takes the larger.
        if w["lentPlaces"] < LENDERS * 2 * SIDE:
            # Only the best lentPlaces lent scores count; the other neighbours keep their own.
            rising = np.where(lent > own, lent, -np.inf)
            cut = -np.sort(-rising, axis=1)[:, int(w["lentPlaces"]) - 1:int(w["lentPlaces"])]
            lent = np.where(rising >= cut, lent, -np.inf)
            lent = np.where(np.isfinite(rising) & (rising < cut), own, lent)
        final = np.where(self.pooled | np.isfinite(lent), np.maximum(own, lent), -np.inf)
        final = np.where(self.valid, final, -np.inf)
        order = np.argsort(-final, axis=1, kind="stable")[:, :max(KS)]
        found = np.take_along_axis(self.evidence & np.isfinite(final), order, axis=1)
        first = np.where(found.any(axis=1), found.argmax(axis=1), max(KS))
        result = {k: float(np.mean(first < k)) for k in KS}
        by_category = defaultdict(list)
        for c, f in zip(self.categories, first):
            by_category[c].append(f < 10)
        result["categories"] = {c: float(np.mean(v)) for c, v in sorted(by_category.items())}
        return result


FEATURES = ["lex", "sim", "fusion", "subject", "time", "answerType", "activation", "confidence",
            "length", "bias"]


def learned_scores(s, b):
    """exp(b . x): a score per column, 0 where the pool has no row for the memory."""
    return np.where(s.row, np.exp(np.clip(s.features() @ b, -30, 30)), 0.0)


def learn(sets, steps=400, rate=0.05):
    """Weights of the features by a listwise loss (softmax over each question's pooled memories,
    the evidence's share to raise), each set weighing the same, fitted by Adam."""
    data = []
    for s in sets:
        x = s.features()
        mask = s.pooled & s.row
        has = (s.evidence & mask).any(axis=1)
        data.append((x[has], mask[has], (s.evidence & mask)[has]))
    b = np.zeros(len(FEATURES))
    b[1] = 5.0  # from similarity alone
    m, v = np.zeros_like(b), np.zeros_like(b)
    for step in range(1, steps + 1):
        grad = np.zeros_like(b)
        for x, mask, ev in data:
            z = np.where(mask, x @ b, -np.inf)
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            ze = np.where(ev, z, -np.inf)
            pe = np.exp(ze - ze.max(axis=1, keepdims=True))
            pe /= pe.sum(axis=1, keepdims=True)
            # d(-log sum_ev p)/db = E_p[x] - E_{p | evidence}[x]
            grad += (np.einsum("qp,qpf->f", p, x) - np.einsum("qp,qpf->f", pe, x)) / len(x)
        grad /= len(data)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        b -= rate * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return b


def neighbours(line, at_index, encoded):
    """Up to SIDE memories just before and SIDE just after, within the window, the same instant
    left out (MemorySearch.neighbours): [(turn, steps, after)]."""
    order = line["order"]  # [(time, position, turn)] in time order
    t = order[at_index][0]
    found = []
    steps, i = 0, at_index - 1
    while i >= 0 and steps < SIDE and order[i][0] >= t - WINDOW_MS:
        if order[i][0] < t and order[i][1] < encoded:
            steps += 1
            found.append((order[i][2], steps, False))
        i -= 1
    steps, i = 0, at_index + 1
    while i < len(order) and steps < SIDE and order[i][0] <= t + WINDOW_MS:
        if order[i][0] > t and order[i][1] < encoded:
            steps += 1
            found.append((order[i][2], steps, True))
        i += 1
    return found


def read(path):
    questions, timelines = defaultdict(list), {}
    with open(path) as lines:
        for text in lines:
            line = json.loads(text)
            if "timeline" in line:
                entries = [(at if at is not None else 0, pos, turn)
                           for turn, (pos, at, _) in line["timeline"].items()]
                entries.sort()
                timelines[(line["set"], line["conversation"])] = {
                    "order": entries,
                    "index": {turn: i for i, (_, _, turn) in enumerate(entries)},
                    "asks": {turn: asks for turn, (_, _, asks) in line["timeline"].items()},
                }
            else:
                questions[line["set"]].append(line)
    return [SetPools(name, qs, timelines) for name, qs in questions.items()]


def objective(sets, w):
    figures = [s.hits(w) for s in sets]
    return tuple(np.mean([f[k] for f in figures]) for k in (10, 5, 20))


TOLERANCE = 0.005  # what a kept change may cost any one set (the rule)


def fit(sets, start):
    """Coordinate ascent over GRID from the shipped constants, a step taken only as the project
    keeps a change: no set's hit@10 lower by more than TOLERANCE, their mean higher (hit@5 and
    hit@20 breaking ties); until no step gains."""
    w = dict(start)
    current = [s.hits(w) for s in sets]
    for _ in range(4):
        moved = False
        for name, values in GRID.items():
            for value in values:
                trial = dict(w, **{name: value})
                figures = [s.hits(trial) for s in sets]
                if kept(current, figures):
                    w, current, moved = trial, figures, True
        if not moved:
            break
    return w


def kept(before, after):
    if any(a[10] < b[10] - TOLERANCE for a, b in zip(after, before)):
        return False
    mean = lambda figures, k: np.mean([f[k] for f in figures])
    return (mean(after, 10), mean(after, 5), mean(after, 20)) > (
        mean(before, 10), mean(before, 5), mean(before, 20))


def row(name, figures):
    return "| %s | %.3f | %.3f | %.3f |" % (name, figures[5], figures[10], figures[20])


def main():
    args = sys.argv[1:]
    sets = read(args[0])
    if "--check" in args or len(args) == 1:
        print("| set | hit@5 | hit@10 | hit@20 |\n|---|---|---|---|")
        for s in sets:
            print(row(s.name, s.hits(SHIPPED)), s.hits(SHIPPED)["categories"])
    if "--try" in args:
        w = dict(SHIPPED)
        for pair in args[args.index("--try") + 1].split(","):
            name, value = pair.split("=")
            w[name] = float(value)
        for s in sets:
            print(row(s.name, s.hits(w)), "shipped", row(s.name, s.hits(SHIPPED)))
    if "--learn" in args:
        print("| left out | shipped hit@5/10/20 | learned hit@5/10/20 |\n|---|---|---|")
        for out in sets:
            b = learn([s for s in sets if s is not out])
            mine, base = out.hits(SHIPPED, learned_scores(out, b)), out.hits(SHIPPED)
            print("| %s | %.3f %.3f %.3f | %.3f %.3f %.3f |" % (
                out.name, base[5], base[10], base[20], mine[5], mine[10], mine[20]),
                dict(zip(FEATURES, np.round(b, 2))))
    if "--each" in args:
        # One constant at a time, the others shipped: its value chosen on the sets kept in (the
        # best of the grid that passes kept(), else the shipped one), scored on the one left out.
        names = [n for n in GRID if n in args[args.index("--each") + 1:]] or list(GRID)
        print("| constant (shipped) | " + " | ".join(
            "%s left out: chosen, hit@10 (shipped)" % s.name for s in sets) + " |")
        print("|---" * (len(sets) + 1) + "|")
        for name in names:
            cells = []
            for out in sets:
                others = [s for s in sets if s is not out]
                best_w, best = dict(SHIPPED), [s.hits(SHIPPED) for s in others]
                for value in GRID[name]:
                    trial = dict(SHIPPED, **{name: value})
                    figures = [s.hits(trial) for s in others]
                    if kept([s.hits(SHIPPED) for s in others], figures) and kept(best, figures):
                        best_w, best = trial, figures
                cells.append("%g: %.3f (%.3f)" % (
                    best_w[name], out.hits(best_w)[10], out.hits(SHIPPED)[10]))
            print("| %s (%g) | %s |" % (name, SHIPPED[name], " | ".join(cells)))
    if "--pair" in args:
        # Two or more constants chosen together over their grids with one set left out, as
        # --each does for one: python3 bench/ranking-fit.py POOL --pair absolute lexical [entity]
        after = args[args.index("--pair") + 1:]
        after = after[:next((i for i, a in enumerate(after) if a.startswith("--")), len(after))]
        names = [n for n in after if n in GRID]
        grid = list(itertools.product(*(GRID[n] for n in names)))
        table = {(s.name, values): s.hits(dict(SHIPPED, **dict(zip(names, values))))
                 for s in sets for values in grid}
        print("| left out | %s chosen on the others | left out hit@10 (shipped) |\n|---|---|---|"
              % ", ".join(names))
        for out in sets:
            others = [s for s in sets if s is not out]
            shipped = [s.hits(SHIPPED) for s in others]
            best, best_figures = tuple(SHIPPED[n] for n in names), shipped
            for values in grid:
                figures = [table[(s.name, values)] for s in others]
                if kept(shipped, figures) and kept(best_figures, figures):
                    best, best_figures = values, figures
            print("| %s | %s | %.3f (%.3f) |" % (
                out.name, ", ".join("%g" % v for v in best),
                table[(out.name, best)][10] if best in grid else out.hits(SHIPPED)[10],
                out.hits(SHIPPED)[10]))
    if "--fit" in args:
        print("| left out | constants fitted on the others | left out: shipped hit@10 | fitted hit@10 |"
              " hit@5 | hit@20 |\n|---|---|---|---|---|---|")
        for out in sets:
            others = [s for s in sets if s is not out]
            w = fit(others, SHIPPED)
            changed = {k: v for k, v in w.items() if v != SHIPPED[k]}
            mine, base = out.hits(w), out.hits(SHIPPED)
            print("| %s | %s | %.3f | %.3f | %.3f (%.3f) | %.3f (%.3f) |" % (
                out.name, changed or "shipped", base[10], mine[10], mine[5], base[5], mine[20],
                base[20]))
        w = fit(sets, SHIPPED)
        print("fitted on all:", {k: v for k, v in w.items() if v != SHIPPED[k]})
        for s in sets:
            print(row(s.name, s.hits(w)), "shipped", row(s.name, s.hits(SHIPPED)))


if __name__ == "__main__":
    main()
