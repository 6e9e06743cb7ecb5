"""The repository's signature vectors (test/fixtures at the repository root)."""
import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "test" / "fixtures"


def load(name: str):
    with open(FIXTURES / name, encoding="utf-8") as f:
        return json.load(f)["cases"]
