package main

import (
	"testing"

	"kpatch/internal/lazyre"
)

// TestRegexpsCompile compiles every regular expression kpatch's packages
// declare with lazyre (compiled on first use, not at start): a pattern that
// does not compile fails here, not on the rare path that uses it.
func TestRegexpsCompile(t *testing.T) {
	if err := lazyre.All(); err != nil {
		t.Fatal(err)
	}
}
