package check

import (
	"testing"

	"inflight/internal/testkit/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }
