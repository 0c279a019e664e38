package keymap

import (
	"testing"

	"go.uber.org/goleak"
)

// Every package checks that no goroutine outlives its tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
