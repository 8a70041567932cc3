package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver FerretDB itself uses
)

// FerretDB 1.24's SQLite backend looks a document up by `_ferretdb_sjson->'$._id' = ?`, but creates the
// unique _id index on `_ferretdb_sjson->"_id"`. SQLite matches expression indexes by their text, so every
// lookup by _id (find, update, delete, findAndModify) scans and JSON-parses the whole table: a lookup
// costs O(documents). idIndexes gives every collection table an index on the exact expression the
// lookups use. It changes no data and no metadata of FerretDB's: listIndexes does not show it, and
// dropping the collection drops it with the table.
const idExpr = `_ferretdb_sjson->'$._id'`

// idIndexSuffix names the extra index after its table, as FerretDB names its own (`<table>_<name>`).
const idIndexSuffix = "__recoup_id_lookup"

type dbFile struct {
	db            *sql.DB
	inode         uint64
	schemaVersion int64
}

// keepIDIndexes checks the SQLite files in dir every interval until ctx ends, and indexes new tables.
func keepIDIndexes(ctx context.Context, dir string, interval time.Duration) {
	files := map[string]*dbFile{}
	defer func() {
		for _, f := range files {
			f.db.Close()
		}
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		seen := map[string]bool{}
		paths, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
		for _, path := range paths {
			seen[path] = true
			if err := indexFile(files, path); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "ferretdb: _id lookup index:", path, err)
			}
		}
		for path, f := range files {
			if !seen[path] {
				f.db.Close()
				delete(files, path)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// indexFile indexes the tables of one database file whose schema changed since the last check.
func indexFile(files map[string]*dbFile, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return nil // dropped between the listing and now
	}
	inode := info.Sys().(*syscall.Stat_t).Ino
	f := files[path]
	if f != nil && f.inode != inode { // the database was dropped and created again
		f.db.Close()
		f = nil
	}
	if f == nil {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		f = &dbFile{db: db, inode: inode, schemaVersion: -1}
		files[path] = f
	}
	var version int64
	if err := f.db.QueryRow("PRAGMA schema_version").Scan(&version); err != nil {
		return err
	}
	if version == f.schemaVersion {
		return nil
	}
	tables, err := collectionTables(f.db)
	if err != nil {
		return err
	}
	for _, table := range tables {
		q := fmt.Sprintf("CREATE INDEX IF NOT EXISTS %q ON %q (%s)", table+idIndexSuffix, table, idExpr)
		if _, err := f.db.Exec(q); err != nil {
			return err
		}
	}
	// Read the version after our own changes, so they do not count as the next change.
	if err := f.db.QueryRow("PRAGMA schema_version").Scan(&version); err != nil {
		return err
	}
	f.schemaVersion = version
	return nil
}

// collectionTables lists the tables of FerretDB's collections; none before its metadata table exists.
func collectionTables(db *sql.DB) ([]string, error) {
	var exists int
	err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_ferretdb_collections'`).Scan(&exists)
	if err != nil || exists == 0 {
		return nil, err
	}
	rows, err := db.Query(`SELECT table_name FROM _ferretdb_collections`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, rows.Err()
}
