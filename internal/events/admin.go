package events

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/apps"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// AdminService is what the admin API and the console do with webhook endpoints.
type AdminService interface {
	// Webhooks lists an app's endpoints. Errors: otp.ErrNotFound for an unknown app.
	Webhooks(ctx context.Context, appID string) ([]Endpoint, error)
	// AddWebhook adds an endpoint to an app and returns it with its secret, which is never
	// shown again. Errors: *otp.ErrInvalidRequest (nothing is stored), also for a URL that
	// leads where the outbound policy refuses, otp.ErrNotFound.
	AddWebhook(ctx context.Context, appID string, in EndpointInput, actor string) (Endpoint, string, error)
	// DeleteWebhook removes an endpoint and its undelivered events. Errors: otp.ErrNotFound.
	DeleteWebhook(ctx context.Context, appID, id, actor string) error
	// Deliveries lists an endpoint's deliveries, newest first. Errors:
	// *otp.ErrInvalidRequest for a bad filter, otp.ErrNotFound.
	Deliveries(ctx context.Context, appID, id string, f DeliveryFilter) ([]Delivery, error)
	// Redeliver makes a delivered or parked event due again. Errors: otp.ErrNotFound.
	Redeliver(ctx context.Context, appID, id, eventID, actor string) (Delivery, error)
	// TestWebhook posts a webhook.test event to the endpoint now and says how it went; it
	// is not queued, not retried and not listed. Errors: otp.ErrNotFound.
	TestWebhook(ctx context.Context, appID, id, actor string) (TestResult, error)
}

// TestResult is how a test-send went.
type TestResult struct {
	EventID   string
	Delivered bool
	// HTTPStatus is the receiver's answer, 0 when it gave none.
	HTTPStatus int
	Error      string
}

// AppLookup finds apps, so that endpoints belong to apps that exist; apps.AdminService is one.
type AppLookup interface {
	// GetApp returns one app. Errors: otp.ErrNotFound.
	GetApp(ctx context.Context, id string) (apps.Info, error)
}

// Audit log actions of endpoints.
const (
	ActionWebhookAdded       = "webhook_added"
	ActionWebhookDeleted     = "webhook_deleted"
	ActionWebhookRedelivered = "webhook_redelivered"
	ActionWebhookTested      = "webhook_tested"
)

// Admin implements AdminService.
type Admin struct {
	store  Store
	apps   AppLookup
	sealer *Sealer
	opts   Options
}

var _ AdminService = (*Admin)(nil)

// NewAdmin returns the admin service over store; test-sends use opts' client and timeout.
func NewAdmin(store Store, apps AppLookup, sealer *Sealer, opts Options) *Admin {
	return &Admin{store: store, apps: apps, sealer: sealer, opts: opts.withDefaults()}
}

// app resolves an app reference (an id, or the default app's alias) to its id.
func (a *Admin) app(ctx context.Context, ref string) (string, error) {
	info, err := a.apps.GetApp(ctx, ref)
	if err != nil {
		return "", err
	}
	return info.App.ID, nil
}

// Webhooks implements AdminService.
func (a *Admin) Webhooks(ctx context.Context, appID string) ([]Endpoint, error) {
	id, err := a.app(ctx, appID)
	if err != nil {
		return nil, err
	}
	return a.store.Endpoints(ctx, id)
}

// AddWebhook implements AdminService.
func (a *Admin) AddWebhook(ctx context.Context, appID string, in EndpointInput, actor string) (Endpoint, string, error) {
	in, err := in.Validate()
	if err != nil {
		return Endpoint{}, "", err
	}
	// The dialer refuses such addresses anyway; refused here, nobody stores an endpoint
	// that could never be reached, nor learns from its failures what answers inside.
	if err := a.opts.Outbound.CheckURL(ctx, in.URL); err != nil {
		return Endpoint{}, "", &otp.ErrInvalidRequest{Fields: map[string]string{"url": err.Error()}}
	}
	app, err := a.app(ctx, appID)
	if err != nil {
		return Endpoint{}, "", err
	}
	e := Endpoint{ID: NewID(), AppID: app, URL: in.URL, Types: in.Types, CreatedAt: a.opts.Now()}
	e.SecretSealed = a.sealer.Seal(e.ID, in.Secret)
	act := history.AdminAction{Action: ActionWebhookAdded, Target: target(app, e.ID), Detail: fmt.Sprintf("%s by %s", e.URL, actor), Time: e.CreatedAt,
		After: history.Change(e.change())}
	if err := a.store.CreateEndpoint(ctx, e, act); err != nil {
		return Endpoint{}, "", err
	}
	return e, in.Secret, nil
}

func target(app, endpoint string) string { return "app:" + app + " webhook:" + endpoint }

// endpointChange is an endpoint as the audit log shows it: never its secret.
type endpointChange struct {
	ID    string   `json:"id"`
	URL   string   `json:"url"`
	Types []string `json:"types"`
}

func (e Endpoint) change() endpointChange {
	return endpointChange{ID: e.ID, URL: e.URL, Types: e.Types}
}

// deliveryChange is a delivery as the audit log of its redelivery shows it.
type deliveryChange struct {
	EventID  string `json:"event_id"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
}

// AuditRedeliver completes a's entry of a redelivery: the delivery's status and attempts
// before, and as the store left it (d). The stores call it inside the change.
func AuditRedeliver(a history.AdminAction, status string, attempts int, d Delivery) history.AdminAction {
	a.Before = history.Change(deliveryChange{EventID: d.Event.ID, Status: status, Attempts: attempts})
	a.After = history.Change(deliveryChange{EventID: d.Event.ID, Status: d.Status, Attempts: d.Attempts})
	return a
}

// DeleteWebhook implements AdminService.
func (a *Admin) DeleteWebhook(ctx context.Context, appID, id, actor string) error {
	app, err := a.app(ctx, appID)
	if err != nil {
		return err
	}
	// Read first for the audit's Before: an endpoint deleted meanwhile makes the delete
	// answer not found, as it would have anyway.
	e, err := a.store.Endpoint(ctx, app, id)
	if err != nil {
		return err
	}
	return a.store.DeleteEndpoint(ctx, app, id, history.AdminAction{Action: ActionWebhookDeleted, Target: target(app, e.ID), Detail: "by " + actor, Time: a.opts.Now(),
		Before: history.Change(e.change())})
}

// Validate checks a deliveries filter. Errors: *otp.ErrInvalidRequest naming "status" or "limit".
func (f DeliveryFilter) Validate() error {
	fields := map[string]string{}
	switch f.Status {
	case "", Pending, Delivered, Parked:
	default:
		fields["status"] = "must be pending, delivered or parked"
	}
	if f.Limit < 0 || f.Limit > MaxDeliveries {
		fields["limit"] = fmt.Sprintf("must be between 1 and %d", MaxDeliveries)
	}
	if len(fields) > 0 {
		return &otp.ErrInvalidRequest{Fields: fields}
	}
	return nil
}

// Deliveries implements AdminService.
func (a *Admin) Deliveries(ctx context.Context, appID, id string, f DeliveryFilter) ([]Delivery, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	app, err := a.app(ctx, appID)
	if err != nil {
		return nil, err
	}
	return a.store.Deliveries(ctx, app, id, f)
}

// Redeliver implements AdminService.
func (a *Admin) Redeliver(ctx context.Context, appID, id, eventID, actor string) (Delivery, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return Delivery{}, err
	}
	if _, err := uuid.Parse(eventID); err != nil {
		return Delivery{}, otp.ErrNotFound
	}
	now := a.opts.Now()
	return a.store.Redeliver(ctx, app, id, eventID, now,
		history.AdminAction{Action: ActionWebhookRedelivered, Target: target(app, id), Detail: "event " + eventID + " by " + actor, Time: now})
}

// TestWebhook implements AdminService. The test-send is audited once it is made, with its
// outcome as After: it changes nothing stored, but it reaches out to the receiver.
func (a *Admin) TestWebhook(ctx context.Context, appID, id, actor string) (TestResult, error) {
	app, err := a.app(ctx, appID)
	if err != nil {
		return TestResult{}, err
	}
	e, err := a.store.Endpoint(ctx, app, id)
	if err != nil {
		return TestResult{}, err
	}
	now := a.opts.Now()
	res := TestResult{EventID: NewID()}
	secret, err := a.sealer.Open(e.ID, e.SecretSealed)
	if err == nil {
		data := fmt.Appendf(nil, `{"app_id":%q,"webhook_id":%q}`, app, e.ID)
		ev := Event{ID: res.EventID, Type: WebhookTest, CreatedAt: now.Truncate(time.Microsecond), Data: data}
		res.HTTPStatus, err = Post(ctx, a.opts.Client, a.opts.Timeout, e.URL, secret, ev, now)
	}
	res.Delivered = err == nil
	if err != nil {
		res.Error = err.Error()
	}
	act := history.AdminAction{Action: ActionWebhookTested, Target: target(app, e.ID), Detail: "event " + res.EventID + " by " + actor, Time: now,
		After: history.Change(map[string]any{"event_id": res.EventID, "delivered": res.Delivered, "http_status": res.HTTPStatus})}
	if err := a.store.RecordAdminAction(ctx, act); err != nil {
		return TestResult{}, fmt.Errorf("events: audit test-send: %w", err)
	}
	return res, nil
}
