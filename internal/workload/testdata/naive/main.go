// Command naive is the end-to-end baseline of the normalize benchmark: it
// normalizes stdin with encoding/json into maps and writes JSON lines.
package main

import (
	"fmt"
	"os"

	"github.com/agentstream/agentstream/internal/workload"
)

func main() {
	if err := workload.NaiveNormalize(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
