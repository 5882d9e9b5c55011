"""docs/formats.md is generated from the Arrow schemas and must match them."""

from pathlib import Path

from agenthop.schemas.docs import render

DOC = Path(__file__).resolve().parents[1] / "docs" / "formats.md"


def test_formats_doc_matches_schemas() -> None:
    assert DOC.read_text() == render(), "docs/formats.md is stale: python -m agenthop.schemas.docs > docs/formats.md"


def test_every_schema_column_is_documented() -> None:
    from agenthop.schemas import agenthop as benchmark, trajectory

    text = DOC.read_text()
    for tables in (trajectory.TABLES, benchmark.TABLES):
        for name, schema in tables.items():
            assert f"### `{name}`" in text
            for field in schema:
                assert f"| `{field.name}` |" in text
