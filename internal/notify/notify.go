// Package notify tells every otpgate instance that something they cache changed, over
// Redis pub/sub: one channel, messages without content. It is a push that makes changes
// apply at once; whoever listens also polls, since pub/sub drops messages while a
// connection is down.
package notify

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"otpgate/internal/otp"
)

// Channel publishes and subscribes to one Redis pub/sub channel.
type Channel struct {
	rdb  redis.UniversalClient
	name string
}

// New returns the channel name on rdb.
func New(rdb redis.UniversalClient, name string) *Channel { return &Channel{rdb: rdb, name: name} }

// Publish announces a change. Errors wrap otp.ErrUnavailable.
func (c *Channel) Publish(ctx context.Context) error {
	if err := c.rdb.Publish(ctx, c.name, "changed").Err(); err != nil {
		return fmt.Errorf("notify: publish: %w: %w", otp.ErrUnavailable, err)
	}
	return nil
}

// Subscribe returns a channel that receives a value per announcement until ctx ends, when it
// is closed. go-redis resubscribes by itself after a lost connection; announcements made
// meanwhile are lost. It waits for the subscription to be confirmed, so an announcement
// made after it returns is received. Errors wrap otp.ErrUnavailable.
func (c *Channel) Subscribe(ctx context.Context) (<-chan struct{}, error) {
	sub := c.rdb.Subscribe(ctx, c.name)
	if _, err := sub.Receive(ctx); err != nil {
		_ = sub.Close()
		return nil, fmt.Errorf("notify: subscribe: %w: %w", otp.ErrUnavailable, err)
	}
	out := make(chan struct{}, 1)
	msgs := sub.Channel()
	go func() {
		defer close(out)
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-msgs:
				if !ok {
					return
				}
				// One pending signal is enough: the listener reloads everything.
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, nil
}
