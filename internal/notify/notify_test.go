package notify

import (
	"testing"
	"time"

	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestPublishReachesEverySubscriber(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	ctx := t.Context()
	a, b := New(rdb, prefix+"changes"), New(rdb, prefix+"changes")
	subs := make([]<-chan struct{}, 2)
	for i, c := range []*Channel{a, b} {
		var err error
		if subs[i], err = c.Subscribe(ctx); err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
	}
	if err := a.Publish(ctx); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	for i, s := range subs {
		select {
		case <-s:
		case <-time.After(2 * time.Second):
			t.Errorf("subscriber %d: got nothing in 2s, want the announcement", i)
		}
	}
	other := New(rdb, prefix+"other")
	if err := other.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-subs[0]:
		t.Error("got an announcement of another channel")
	case <-time.After(100 * time.Millisecond):
	}
}
