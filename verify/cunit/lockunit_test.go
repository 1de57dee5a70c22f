package cunit

import (
	"testing"
	"time"
)

// TestLockUnit: a second maker of the same unit waits for the first; a
// maker of another unit does not.
func TestLockUnit(t *testing.T) {
	kb := &kbuildReader{}
	unlock := kb.lockUnit("a")
	other := make(chan struct{})
	go func() { kb.lockUnit("b")(); close(other) }()
	select {
	case <-other:
	case <-time.After(5 * time.Second):
		t.Fatal("the unit b waited for the making of a")
	}
	same := make(chan struct{})
	go func() { kb.lockUnit("a")(); close(same) }()
	select {
	case <-same:
		t.Fatal("a second maker of a did not wait for the first")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	select {
	case <-same:
	case <-time.After(5 * time.Second):
		t.Fatal("the second maker of a still waits after the first finished")
	}
}
