// Command ferretdb runs FerretDB embedded in this module, because the upstream
// binary built with `go install` panics on a missing version file.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("sqlite-dir", "", "directory for SQLite files (required unless --postgresql-url)")
	pg := flag.String("postgresql-url", "", "PostgreSQL URL; selects the postgresql handler")
	// FerretDB already runs SQLite in WAL mode; with synchronous=NORMAL a commit no longer waits for an
	// fsync of the WAL. A crash of FerretDB or of any client loses nothing; only an OS crash or power loss
	// can roll back the last commits. FULL is SQLite's default and costs a WAL fsync per commit.
	synchronous := flag.String("sqlite-synchronous", "normal", "SQLite synchronous pragma: normal or full")
	flag.Parse()

	conf := ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: *listen}}
	if *pg != "" {
		conf.Handler = "postgresql"
		conf.PostgreSQLURL = *pg
	} else {
		if *dir == "" {
			fmt.Fprintln(os.Stderr, "ferretdb: --sqlite-dir or --postgresql-url is required")
			os.Exit(2)
		}
		abs, err := filepath.Abs(*dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ferretdb:", err)
			os.Exit(2)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "ferretdb:", err)
			os.Exit(2)
		}
		if *synchronous != "normal" && *synchronous != "full" {
			fmt.Fprintln(os.Stderr, "ferretdb: --sqlite-synchronous must be normal or full")
			os.Exit(2)
		}
		conf.Handler = "sqlite"
		conf.SQLiteURL = "file:" + abs + "/?_pragma=synchronous(" + *synchronous + ")"
	}

	f, err := ferretdb.New(&conf)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if conf.Handler == "sqlite" {
		go keepIDIndexes(ctx, *dir, 200*time.Millisecond)
	}
	fmt.Println(f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
