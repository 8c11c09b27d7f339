"""The SQLite lifecycle store's tables, and the statements that read and insert item statistics."""

from __future__ import annotations

import dataclasses

from long_term_memory.experience.models import ItemStats

STAT_COLUMNS = tuple(f.name for f in dataclasses.fields(ItemStats))
SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
  item_id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, task_id TEXT NOT NULL,
  status TEXT NOT NULL, validation_level INTEGER NOT NULL, trust REAL NOT NULL,
  consecutive_fail REAL NOT NULL, hit_count INTEGER NOT NULL, use_count INTEGER NOT NULL,
  pass_count INTEGER NOT NULL, partial_count INTEGER NOT NULL, fail_count INTEGER NOT NULL,
  support INTEGER NOT NULL, created_at REAL NOT NULL, last_pass_at REAL NOT NULL,
  updated_at REAL NOT NULL, digest TEXT NOT NULL DEFAULT '', record_offset INTEGER NOT NULL DEFAULT -1);
CREATE TABLE IF NOT EXISTS records (
  memory_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, record_offset INTEGER NOT NULL,
  length INTEGER NOT NULL DEFAULT -1, crc INTEGER);
CREATE TABLE IF NOT EXISTS catalog_state (
  id INTEGER PRIMARY KEY CHECK (id = 1), generation TEXT NOT NULL, jsonl_offset INTEGER NOT NULL,
  jsonl_crc INTEGER);
CREATE TABLE IF NOT EXISTS merges (
  memory_id TEXT NOT NULL, position INTEGER NOT NULL, item_id TEXT NOT NULL,
  task_id TEXT NOT NULL, ts REAL NOT NULL, PRIMARY KEY (memory_id, position));
CREATE TABLE IF NOT EXISTS decisions (
  decision_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, ts REAL NOT NULL);
CREATE TABLE IF NOT EXISTS hits (
  decision_id TEXT NOT NULL, item_id TEXT NOT NULL, shown INTEGER NOT NULL,
  used INTEGER NOT NULL, ts REAL NOT NULL, PRIMARY KEY (decision_id, item_id));
CREATE TABLE IF NOT EXISTS validations (
  decision_id TEXT NOT NULL, item_id TEXT NOT NULL, result TEXT NOT NULL, used INTEGER NOT NULL,
  notes TEXT NOT NULL, trust_before REAL NOT NULL, trust_after REAL NOT NULL,
  level_before INTEGER NOT NULL, level_after INTEGER NOT NULL, status_after TEXT NOT NULL,
  ts REAL NOT NULL, PRIMARY KEY (decision_id, item_id));
"""
SELECT_STATS = f"SELECT {', '.join(STAT_COLUMNS)} FROM items"
INSERT_ITEM = (f"INSERT INTO items (memory_id, task_id, updated_at, digest, record_offset, "
                f"{', '.join(STAT_COLUMNS)}) VALUES (?, ?, ?, ?, ?{', ?' * len(STAT_COLUMNS)})")
