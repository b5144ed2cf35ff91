"""SmartAO's SQLite store: evaluations (also the eval cache) and lessons; `apply_reflexion`.

`apply_reflexion` is the seed's nightly batch (a Celery Beat job there; here a command that
cron or any scheduler runs, e.g. `0 3 * * * duckflow essay reflexion`). It reads the
evaluations not yet reflected on, and for each criterion whose mean level is under
`threshold` of its maximum it writes a lesson from the reasons given most often. DraftAgent
puts the lessons in its system prompt. It needs no model and is idempotent: each evaluation
is reflected on once, and a lesson is updated in place.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS evaluations (
    id INTEGER PRIMARY KEY,
    essay_id TEXT NOT NULL,
    essay_sha TEXT NOT NULL,
    rubric_sha TEXT NOT NULL,
    model TEXT NOT NULL,
    scores TEXT NOT NULL,
    total REAL NOT NULL,
    created_at REAL NOT NULL,
    reflected INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS evaluations_cache ON evaluations(rubric_sha, essay_sha, model);
CREATE TABLE IF NOT EXISTS lessons (
    criterion TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    evidence INTEGER NOT NULL,
    mean REAL NOT NULL,
    updated_at REAL NOT NULL
);
"""


def default_db() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "smartao.db"


@dataclass(frozen=True)
class ReflexionReport:
    evaluations: int
    lessons: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"evaluations": self.evaluations, "lessons": self.lessons}


class EssayStore:
    def __init__(self, path: str | Path | None = None) -> None:
        from duckflow.store.sqlite import connect

        self.path = path or default_db()
        self.conn = connect(self.path)
        self.conn.executescript(_SCHEMA)

    def cached_evaluation(self, rubric_sha: str, essay_sha: str, model: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT scores, total FROM evaluations WHERE rubric_sha=? AND essay_sha=? AND model=? "
            "ORDER BY id DESC LIMIT 1", (rubric_sha, essay_sha, model)).fetchone()
        return None if row is None else {"scores": json.loads(row["scores"]), "total": float(row["total"])}

    def save_evaluation(self, essay_id: str, essay_sha: str, rubric_sha: str, model: str, ev: Any) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO evaluations(essay_id, essay_sha, rubric_sha, model, scores, total, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (essay_id, essay_sha, rubric_sha, model, json.dumps(ev.scores, ensure_ascii=False),
                 float(ev.total), time.time()))

    def lessons(self) -> list[str]:
        return [r["text"] for r in self.conn.execute("SELECT text FROM lessons ORDER BY mean, criterion")]

    def apply_reflexion(self, *, threshold: float = 0.6, min_evidence: int = 2) -> ReflexionReport:
        rows = self.conn.execute("SELECT id, scores FROM evaluations WHERE reflected = 0 ORDER BY id").fetchall()
        levels: dict[str, list[float]] = defaultdict(list)
        reasons: dict[str, Counter[str]] = defaultdict(Counter)
        names: dict[str, str] = {}
        for row in rows:
            for s in json.loads(row["scores"]):
                cid = s["criterion"]
                if s.get("level") is None:  # "could not be judged" says nothing about the essay
                    continue
                names[cid] = s.get("name", cid)
                ratio = float(s["level"]) / float(s.get("max") or 1)
                levels[cid].append(ratio)
                if ratio < threshold:
                    reasons[cid][s.get("reason", "").strip()] += 1
        written: list[dict[str, Any]] = []
        now = time.time()
        with self.conn:
            for cid, values in sorted(levels.items()):
                mean = sum(values) / len(values)
                if mean >= threshold or len(values) < min_evidence:
                    continue
                top = [r for r, _ in reasons[cid].most_common(2) if r]
                text = f"{names[cid]}: scored low in {sum(reasons[cid].values())} of {len(values)} recent essays"
                if top:
                    text += " — " + " / ".join(top)
                self.conn.execute(
                    "INSERT INTO lessons(criterion, text, evidence, mean, updated_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT(criterion) DO UPDATE SET text=excluded.text, evidence=lessons.evidence+excluded.evidence, "
                    "mean=excluded.mean, updated_at=excluded.updated_at",
                    (cid, text, len(values), mean, now))
                written.append({"criterion": cid, "mean": round(mean, 3), "evidence": len(values), "lesson": text})
            self.conn.executemany("UPDATE evaluations SET reflected = 1 WHERE id = ?", [(r["id"],) for r in rows])
        return ReflexionReport(len(rows), written)

    def close(self) -> None:
        self.conn.close()
