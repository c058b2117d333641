"""Attribution in what is published (issue 21), on SQLite and PostgreSQL: each Atom
entry names the source outlet, its byline and date, and the approving editor, in a
feed that declares its language and its own link; each JSON line carries the same,
plus which summariser wrote the summary, which models checked it and whether the
model checks ran ("not run" said out loud, not shown by absence)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from lxml import etree
from sqlalchemy import update
from sqlmodel import Session

from publish.payload import SCHEMA_PATH
from store.db import open_store, session_scope
from store.models import Item
from tests.publish_helpers import approve, cli, jsonl_lines, run_pipeline, write_config

# Each test's database starts at the newest schema (conftest's migrated template), so
# `copydesk init` in write_config migrates nothing; what init makes is the same.
pytestmark = pytest.mark.usefixtures("migrated")

ATOM = "{http://www.w3.org/2005/Atom}"
CD = "{tag:copydesk,2026:ns/evidence}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def test_entries_name_the_outlet_the_byline_the_editor_and_the_models(
    tmp_path: Path, db_url: str
) -> None:
    import json

    config = write_config(tmp_path, db_url, targets=())
    run_pipeline(config)
    engine = open_store(db_url)
    [item_id] = approve(engine, 1, editor="ann")
    with session_scope(engine) as session:  # the extract's byline and date, as stored at ingest
        session.execute(
            update(Item)
            .where(Item.id == item_id)
            .values(author="Morag Tennant", published_at=datetime(2026, 11, 30, 7, 15, tzinfo=UTC))
        )
    link = "https://news.example.org/copydesk.xml"
    config = write_config(
        tmp_path,
        db_url,
        targets=("atom", "jsonl"),
        extra="",
    )
    text = config.read_text(encoding="utf-8").replace(
        'path = "out/feed.xml"\n', f'path = "out/feed.xml"\nlink = "{link}"\nlanguage = "en-GB"\n'
    )
    config.write_text(text, encoding="utf-8")
    result = cli(config, "publish")
    assert result.exit_code == 0, result.output
    with Session(engine) as session:
        item = session.get(Item, item_id)
        summariser = item.summariser
    engine.dispose()

    [line] = jsonl_lines(tmp_path)
    jsonschema.validate(line, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert line["source_outlet"] == "sample"
    assert line["source_byline"] == "Morag Tennant"
    assert line["source_published_at"] == "2026-11-30T07:15:00Z"
    assert line["approved_by"] == "ann"
    assert line["written_by"] == summariser == "extractive"
    assert line["checked_by"] == []
    assert line["model_checks_ran"] is False  # said, not left to absence

    root = etree.parse(str(tmp_path / "out" / "feed.xml")).getroot()
    assert root.get(XML_LANG) == "en-GB"
    assert [x.get("href") for x in root.findall(f"{ATOM}link") if x.get("rel") == "self"] == [link]
    [entry] = root.findall(f"{ATOM}entry")
    source = entry.find(f"{CD}source")
    assert (source.get("outlet"), source.get("byline"), source.get("published")) == (
        "sample",
        "Morag Tennant",
        "2026-11-30T07:15:00Z",
    )
    assert entry.find(f"{ATOM}contributor/{ATOM}name").text == "ann"
