package sms

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"otpgate/internal/otp"
)

// SNSConfig configures an Amazon SNS sender (SNS_* variables). Region and credentials
// that it leaves empty come from the AWS SDK's standard chain: AWS_REGION,
// AWS_ACCESS_KEY_ID…, the shared config and credentials files, web identity, the
// container's or the instance's role.
type SNSConfig struct {
	// Region is the AWS region to publish in, such as us-east-1.
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken are static credentials; both of the
	// first two or neither.
	AccessKeyID, SecretAccessKey, SessionToken string
	// SenderID is the alphanumeric sender id (AWS.SNS.SMS.SenderID) where the country
	// supports one; empty sends none.
	SenderID string
	// OriginationNumber is the number to send from (AWS.MM.SMS.OriginationNumber), in
	// E.164; empty lets AWS choose.
	OriginationNumber string
	// Endpoint replaces the regional SNS endpoint (the SDK's BaseEndpoint); tests point it
	// at a fake.
	Endpoint string
	// Name is the instance's name in routes, history and metrics; empty means "sns".
	Name string
	// HTTPClient carries the Publish requests (its redirects are turned off); nil builds
	// one. The SDK's own credential providers keep their own client, since an instance
	// role is reached at a link-local address that the outbound policy refuses.
	HTTPClient *http.Client
	// Timeout is the client's backstop when HTTPClient has none; 0 means DefaultTimeout.
	Timeout time.Duration
}

// String hides the secret key and the session token, so printing the config cannot leak them.
func (c SNSConfig) String() string {
	return fmt.Sprintf("{Name:%s Region:%s AccessKeyID:%s SecretAccessKey:[redacted] SenderID:%s OriginationNumber:%s Endpoint:%s Timeout:%s}",
		c.Name, c.Region, c.AccessKeyID, c.SenderID, c.OriginationNumber, redactURL(c.Endpoint), c.Timeout)
}

// LogValue hides the secret key and the session token from slog.
func (c SNSConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", c.Name),
		slog.String("region", c.Region),
		slog.String("access_key_id", c.AccessKeyID),
		slog.String("endpoint", redactURL(c.Endpoint)),
		slog.Duration("timeout", c.Timeout),
	)
}

// SNS sends SMS with Amazon SNS's Publish to a phone number, through the AWS SDK for Go
// v2. SNS calls no one back about delivery (it can log delivery status to CloudWatch
// Logs), so an SNS instance reads no receipts.
type SNS struct {
	name        string
	client      *sns.Client
	senderID    string
	origination string
}

// NewSNS loads the AWS configuration (ctx bounds reading it) and returns an SNS sender.
// The SDK makes one attempt per message: its retries of throttling, 5xx answers and
// broken connections would send a second SMS when the first had got through, and a
// definite failure is better given to the next provider at once.
func NewSNS(ctx context.Context, cfg SNSConfig) (*SNS, error) {
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("sms sns: set both the access key id and the secret access key, or neither")
	}
	if cfg.Endpoint != "" && !absoluteHTTP(cfg.Endpoint) {
		return nil, fmt.Errorf("sms sns: endpoint %q must be an absolute http or https URL", redactURL(cfg.Endpoint))
	}
	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("sms sns: load the AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return nil, errors.New("sms sns: no region: set one, or AWS_REGION or a profile's region")
	}
	name := cfg.Name
	if name == "" {
		name = "sns"
	}
	client := sns.NewFromConfig(awsCfg, func(o *sns.Options) {
		o.HTTPClient = newClient(cfg.HTTPClient, cfg.Timeout)
		o.Retryer = aws.NopRetryer{}
		o.RetryMaxAttempts = 1
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	})
	return &SNS{name: name, client: client, senderID: cfg.SenderID, origination: cfg.OriginationNumber}, nil
}

// Name is the instance's name, "sns" unless configured otherwise.
func (s *SNS) Name() string { return s.name }

// Send publishes an SMS to m.To as a transactional message; the provider id is SNS's
// MessageId. Errors wrap otp.ErrNotDelivered for a 3xx/4xx answer (InvalidParameter, an
// opted-out number, AuthorizationError, a bad signature, Throttled), a connection that
// could not be opened, a failure before any request left (no credentials) or another
// channel than SMS; a 5xx, a timeout or a broken connection is unknown.
func (s *SNS) Send(ctx context.Context, m otp.Message) (string, error) {
	if ch := otp.ChannelOf(m); ch != otp.ChannelSMS {
		return "", fmt.Errorf("%s: channel %q: %w", s.name, ch, otp.ErrNotDelivered)
	}
	attrs := map[string]types.MessageAttributeValue{"AWS.SNS.SMS.SMSType": snsString("Transactional")}
	if s.senderID != "" {
		attrs["AWS.SNS.SMS.SenderID"] = snsString(s.senderID)
	}
	if s.origination != "" {
		attrs["AWS.MM.SMS.OriginationNumber"] = snsString(s.origination)
	}
	out, err := s.client.Publish(ctx, &sns.PublishInput{PhoneNumber: aws.String(m.To), Message: aws.String(m.Body), MessageAttributes: attrs})
	if err != nil {
		return "", s.classify(err, m.Body)
	}
	return aws.ToString(out.MessageId), nil
}

func snsString(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

// classify sorts an error of Publish as sms.go sorts HTTP failures, by how far the
// request got: an answer by its status, a transport failure by whether a connection was
// ever open, a call cancelled once the request was handed to the transport as unknown,
// and anything that failed before that (credentials, signing) as definite. A 2xx whose
// body could not be read was taken all the same: nil, for a send without an id.
func (s *SNS) classify(err error, body string) error {
	detail := snippet(err.Error(), body)
	var api smithy.APIError
	if errors.As(err, &api) {
		detail = fmt.Sprintf("%s: %s", snippet(api.ErrorCode(), body), snippet(api.ErrorMessage(), body))
	}
	// The SDK wraps every failure after the transport was called in a ResponseError,
	// with status 0 when no answer came.
	var answered *awshttp.ResponseError
	if errors.As(err, &answered) && answered.HTTPStatusCode() != 0 {
		status := answered.HTTPStatusCode()
		if status/100 == 2 {
			return nil
		}
		return statusError(s.name, reply{status: status, location: answered.Response.Header.Get("Location")}, detail)
	}
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return transportError(s.name, send.Err)
	}
	var cancelled *smithy.CanceledError
	if errors.As(err, &cancelled) {
		return fmt.Errorf("%s: publish (delivery unknown): %w", s.name, err)
	}
	return fmt.Errorf("%s: nothing sent: %w: %s", s.name, otp.ErrNotDelivered, detail)
}
