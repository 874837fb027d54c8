"""Rewrite the shipped studies in results/ at the current study schema version, through the contract's own
migration (core.lab.study.migration.migrate, the one every saved file is read through): every number, run,
prediction and sentence kept.

    python tools/migrate_shipped_studies.py            # rewrite the files that are of the previous version
    python tools/migrate_shipped_studies.py --check    # say what would change, write nothing

Each file is saved with core.lab.study.contract.save_study (compact JSON; a .gz without a timestamp), so the
same study always gives the same bytes. A file already at the current version is left alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.lab.contract import SCHEMA_VERSION, read_json  # noqa: E402
from core.lab.shipped import SHIPPED_STUDIES, results_dir  # noqa: E402
from core.lab.study.contract import MAX_STUDY_BYTES, save_study  # noqa: E402
from core.lab.study.migration import migrate  # noqa: E402


def migrate_file(path: Path, write: bool) -> str:
    """Migrate one study file (in place when `write`); one line saying what happened."""
    old = read_json(path.read_bytes(), MAX_STUDY_BYTES)
    version = old.get("schema_version")
    if version == SCHEMA_VERSION:
        return f"{path.name}: already at version {SCHEMA_VERSION}"
    new = migrate(old)  # save_study validates it: a file the migration cannot read is refused here
    if write:
        save_study(new, path)
    return f"{path.name}: version {version} -> {new['schema_version']}" + ("" if write else " (not written)")


def main(argv: list[str] | None = None) -> int:
    """Migrate every shipped study; 0 when all are at the current version (or would be, with --check)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="say what would change, write nothing")
    args = parser.parse_args(argv)
    for name in SHIPPED_STUDIES:
        print(migrate_file(results_dir() / name, write=not args.check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
