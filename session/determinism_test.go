package session

import (
	"reflect"
	"testing"

	"inflight/event"
)

// A tracker fed the same events at the same times ends the same, whatever
// the order Go's maps iterate in: a replay playing a trace on from a
// checkpoint must reach what the run reached. Two tasks whose tasks/cancel
// fell due together were begun in the map's order, so their children took
// each other's IDs one run in a few.
func TestTrackerIsDeterministic(t *testing.T) {
	for rep := 0; rep < 5; rep++ {
		for seed := range uint64(40) {
			era := event.EraLegacy
			if seed%2 == 0 {
				era = event.EraModern
			}
			cfg := Config{}
			if seed%3 == 0 {
				cfg = smallConfig()
			}
			ops := randomOps(seed, 120, era, 0)
			if a, b := run(NewTracker(cfg), ops), run(NewTracker(cfg), ops); !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d: two trackers fed the same session differ", seed)
			}
		}
	}
}
