package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentstream/agentstream/opencodestore"
	"github.com/agentstream/agentstream/store/sqlite"
)

// opencodeRecords reads the sessions an opencode file holds: every session
// of its database (opencode.db), or the one session of an older build's
// storage/session/<project>/<id>.json with its messages and parts, unless
// the database beside it holds that session too (opencode copies the
// files into it).
func opencodeRecords(ctx context.Context, path string) ([]localRecord, error) {
	if filepath.Base(path) == "opencode.db" {
		db, err := sqlite.OpenReadOnly(path)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		ss, err := opencodestore.Sessions(ctx, db)
		if err != nil {
			return nil, err
		}
		var out []localRecord
		for _, s := range ss {
			var b bytes.Buffer
			if err := opencodestore.Records(ctx, db, s.ID, &b); err != nil {
				return nil, err
			}
			out = append(out, localRecord{key: s.ID, body: b.Bytes(), mod: s.Updated})
		}
		return out, nil
	}
	// storage/session/<project>/<id>.json
	data := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path))))
	id := strings.TrimSuffix(filepath.Base(path), ".json")
	if held, err := opencodeHolds(ctx, filepath.Join(data, "opencode.db"), id); err != nil || held {
		return nil, err
	}
	s := opencodestore.FileSession(data, path)
	var b bytes.Buffer
	if err := opencodestore.FileRecords(data, s, &b); err != nil {
		return nil, err
	}
	return []localRecord{{body: b.Bytes(), mod: s.Updated}}, nil
}

// opencodeHolds reports whether the opencode database at path, if there is
// one, holds the session id.
func opencodeHolds(ctx context.Context, path, id string) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	db, err := sqlite.OpenReadOnly(path)
	if err != nil {
		return false, err
	}
	defer db.Close()
	ss, err := opencodestore.Sessions(ctx, db)
	if err != nil {
		return false, err
	}
	for _, s := range ss {
		if s.ID == id {
			return true, nil
		}
	}
	return false, nil
}
