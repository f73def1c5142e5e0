package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"

	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/store"
)

// redactFlags are the flags of the commands that take native lines in:
// secrets are masked unless --no-redact (or AGENTSTREAM_REDACT=off) says
// otherwise, with the rules of --redact-rules (or
// $AGENTSTREAM_REDACT_RULES) added to the built-in ones.
type redactFlags struct {
	off   *bool
	rules *string
}

func redactFlag(fs *flag.FlagSet) redactFlags {
	return redactFlags{
		off:   fs.Bool("no-redact", false, "keep secrets as the harness printed them (default: masked; also AGENTSTREAM_REDACT=off)"),
		rules: fs.String("redact-rules", "", "add the redaction rules of `FILE` (default $AGENTSTREAM_REDACT_RULES; see package redact)"),
	}
}

// redactor returns the Redactor the flags ask for, nil when redaction is
// off. Its key is the store's (keys, when not nil), else the hex of
// $AGENTSTREAM_REDACT_KEY, else a random one: tags then compare within
// this process only.
func (f redactFlags) redactor(ctx context.Context, e *env, keys store.Keys) (*redact.Redactor, error) {
	if *f.off || e.getenv("AGENTSTREAM_REDACT") == "off" {
		return nil, nil
	}
	var opts redact.Options
	rules := *f.rules
	if rules == "" {
		rules = e.getenv("AGENTSTREAM_REDACT_RULES")
	}
	if rules != "" {
		fh, err := os.Open(rules)
		if err != nil {
			return nil, fmt.Errorf("redaction rules: %w", err)
		}
		opts.Rules, err = redact.ParseRules(fh)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rules, err)
		}
	}
	switch k := e.getenv("AGENTSTREAM_REDACT_KEY"); {
	case keys != nil:
		key, err := keys.Key(ctx, store.RedactKey)
		if err != nil {
			return nil, err
		}
		opts.Key = key
	case k != "":
		key, err := hex.DecodeString(k)
		if err != nil || len(key) < 16 {
			return nil, fmt.Errorf("AGENTSTREAM_REDACT_KEY: want 32 hex digits or more")
		}
		opts.Key = key
	default:
		opts.Key = make([]byte, store.KeySize)
		rand.Read(opts.Key)
	}
	return redact.New(opts), nil
}
