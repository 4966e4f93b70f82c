package inproc

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/email/emailtest"
	"otpgate/internal/events"
	"otpgate/internal/events/eventstest"
	"otpgate/internal/pii"
	"otpgate/internal/server/servertest"
)

// pgDump is the data of the database at dsn as pg_dump writes it. Without pg_dump on the
// PATH the test is skipped, and fails under CI, where it must run.
func pgDump(t *testing.T, dsn string) string {
	t.Helper()
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pg_dump is not on the PATH: %v", err)
		}
		t.Skipf("pg_dump is not on the PATH: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "--data-only", "--no-owner", "--dbname", dsn).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	return string(out)
}

// TestNoPlainAddressAtRest runs a day's use through the real server (SMS and email sends,
// checks, a refused send, webhook events, a limit reset) and then reads the whole database
// with pg_dump: no phone number or email address may be in it, in any spelling, while the
// admin API and the webhooks still give them back in plain.
func TestNoPlainAddressAtRest(t *testing.T) {
	mb := emailtest.New(t, emailtest.STARTTLS, nil)
	p := servertest.NewProvider(t)
	rc := eventstest.New(t, servertest.HookSecret)
	env := servertest.ProdEnv(t, p, servertest.EventsEnv(map[string]string{
		"SMTP_URL": "smtp://otpgate:s3cret%20pass@" + mb.Addr, "SMTP_FROM": "Example <no-reply@example.com>", "SMTP_CA_FILE": mb.CAFile,
		"OTP_LIMIT_PHONE": "1/1h", "OTP_LIMIT_IP": "off",
	}))
	in := servertest.Start(t, env)
	c := hookClient(t)
	addHook(t, c, in, "default", rc.URL, events.Types()...)

	phone := servertest.NewPhone()
	r := servertest.Send(t, in, phone)
	servertest.WantStatus(t, r, http.StatusCreated, "")
	id := r.Str("id")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": "000000"}), http.StatusUnprocessableEntity, "invalid_code")
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"phone": phone, "code": servertest.LastCode(t, p, phone)}), http.StatusOK, "")
	servertest.WantStatus(t, servertest.Send(t, in, phone), http.StatusTooManyRequests, "rate_limited")

	const addr = "Pii.Person@example.com"
	r = servertest.Post(t, in.API+"/v1/verifications", map[string]string{"email": addr})
	servertest.WantStatus(t, r, http.StatusCreated, "")
	mailed := r.Str("email")
	_, code := mailCode(t, mb, mailed)
	servertest.WantStatus(t, servertest.Check(t, in, map[string]string{"email": mailed, "code": code}), http.StatusOK, "")

	servertest.WantStatus(t, servertest.AdminCall(t, in, http.MethodDelete, "/admin/api/limits?phone="+url.QueryEscape(phone), nil), http.StatusOK, "")

	// The webhooks carry the plain number: the outbox's sealed one is opened for them.
	ok := rc.WaitFor(20*time.Second, func(evs []events.Event) bool {
		return len(servertest.TypesOf(evs, id)) == 3 && slices.ContainsFunc(evs, func(e events.Event) bool {
			return e.Type == events.SendBlocked && strings.Contains(string(e.Data), `"to":"`+phone+`"`)
		})
	})
	if !ok {
		t.Fatalf("got events %v, want three of the verification and a send.blocked to %s", rc.Events(), phone)
	}
	for _, ev := range rc.Events() {
		if eventstest.Subject(ev) == id && !strings.Contains(string(ev.Data), phone) {
			t.Errorf("%s: got %s, want it to name %s", ev.Type, ev.Data, phone)
		}
	}

	// The admin API reads them in plain and finds them by address.
	h := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/sends?phone="+url.QueryEscape(phone), nil)
	servertest.WantStatus(t, h, http.StatusOK, "")
	if strings.Count(h.Raw, `"phone":"`+phone+`"`) != 2 {
		t.Errorf("history by phone: got %s, want its two sends (sent and blocked) naming %s", h.Raw, phone)
	}
	// The audit names a reset's number by its mask: the log outlives the history it
	// audits, and an erasure must not need to find the person in it.
	if a := servertest.AdminCall(t, in, http.MethodGet, "/admin/api/audit", nil); !strings.Contains(a.Raw, "phone:"+pii.Mask(phone)) || strings.Contains(a.Raw, phone) {
		t.Errorf("audit: got %s, want the reset of phone:%s, masked", a.Raw, pii.Mask(phone))
	}

	dump := pgDump(t, env["DATABASE_URL"])
	if !strings.Contains(dump, "COPY public.sends") || !strings.Contains(dump, id) {
		t.Fatalf("the dump holds no sends of this test: %.2000s", dump)
	}
	for _, s := range []string{phone, strings.TrimPrefix(phone, "+"), addr, strings.ToLower(addr), mailed} {
		if i := strings.Index(dump, s); i >= 0 {
			t.Errorf("the dump holds %q in plain: …%s…", s, dump[max(i-200, 0):min(i+100, len(dump))])
		}
	}
}
