package inproc

import (
	"testing"

	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
