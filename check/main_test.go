package check

import (
	"testing"

	"inflight/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }
