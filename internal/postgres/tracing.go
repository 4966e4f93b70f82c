package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/tracing"
)

// OpenOption configures Open.
type OpenOption func(*pgx.ConnConfig)

// Tracing makes every statement, batch and copy of the pool a span of tp
// (docs/traces.md). Off (a nil or no-op provider) installs nothing, so statements cost
// what they did.
func Tracing(tp trace.TracerProvider) OpenOption {
	return func(c *pgx.ConnConfig) {
		if !tracing.Off(tp) {
			c.Tracer = &pgxTracer{tr: tracing.Tracer(tp)}
		}
	}
}

// maxQueryText bounds the statement text a span carries.
const maxQueryText = 2048

// pgxTracer is pgx's tracer hooks as spans. A span names the statement's text, whose
// values are all placeholders ($1, $2, ...), and never its arguments, which hold numbers,
// addresses and hashes of codes. Only statements run inside a trace (a request's, a
// webhook delivery's) get a span: the background loops' polls would otherwise each start
// a trace of one statement, every second on every instance.
type pgxTracer struct {
	tr trace.Tracer
}

var (
	_ pgx.QueryTracer    = (*pgxTracer)(nil)
	_ pgx.BatchTracer    = (*pgxTracer)(nil)
	_ pgx.CopyFromTracer = (*pgxTracer)(nil)
)

// TraceQueryStart starts the span of one statement.
func (t *pgxTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	op := operation(data.SQL)
	ctx, _ = t.tr.Start(ctx, "postgres "+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("db.system.name", "postgresql"),
		attribute.String("db.operation.name", op),
		attribute.String("db.query.text", queryText(data.SQL)),
	))
	return ctx
}

// TraceQueryEnd ends it with the rows it touched or its error.
func (t *pgxTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	end(trace.SpanFromContext(ctx), data.CommandTag.RowsAffected(), data.Err)
}

// TraceBatchStart starts the span of a batch; its statements are counted as they are queued.
func (t *pgxTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	n := 0
	if data.Batch != nil {
		n = data.Batch.Len()
	}
	ctx, _ = t.tr.Start(ctx, "postgres batch", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("db.system.name", "postgresql"),
		attribute.String("db.operation.name", "BATCH"),
		attribute.Int("db.operation.batch.size", n),
	))
	return ctx
}

// TraceBatchQuery records each statement of the batch as an event of its span.
func (t *pgxTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("db.query.text", queryText(data.SQL))}
	if data.Err != nil {
		attrs = append(attrs, attribute.Bool("error", true))
	}
	span.AddEvent("statement", trace.WithAttributes(attrs...))
}

// TraceBatchEnd ends the batch's span.
func (t *pgxTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	end(trace.SpanFromContext(ctx), -1, data.Err)
}

// TraceCopyFromStart starts the span of a COPY.
func (t *pgxTracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	ctx, _ = t.tr.Start(ctx, "postgres COPY", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("db.system.name", "postgresql"),
		attribute.String("db.operation.name", "COPY"),
		attribute.String("db.collection.name", data.TableName.Sanitize()),
	))
	return ctx
}

// TraceCopyFromEnd ends it.
func (t *pgxTracer) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceCopyFromEndData) {
	end(trace.SpanFromContext(ctx), data.CommandTag.RowsAffected(), data.Err)
}

// end ends a statement's span; rows < 0 records no count. The error's text is left out:
// a constraint's message can quote the row's values.
func end(span trace.Span, rows int64, err error) {
	if span.IsRecording() {
		if rows >= 0 && err == nil {
			span.SetAttributes(attribute.Int64("db.response.returned_rows", rows))
		}
		if err != nil {
			span.SetStatus(codes.Error, "statement failed")
			if code := errCode(err); code != "" {
				span.SetAttributes(attribute.String("db.response.status_code", code))
			}
		}
	}
	span.End()
}

// operation is a statement's first word: SELECT, INSERT, WITH, ...
func operation(sql string) string {
	sql = strings.TrimSpace(sql)
	for strings.HasPrefix(sql, "--") {
		_, rest, ok := strings.Cut(sql, "\n")
		if !ok {
			return "QUERY"
		}
		sql = strings.TrimSpace(rest)
	}
	op, _, _ := strings.Cut(sql, " ")
	op, _, _ = strings.Cut(op, "\n")
	if op == "" {
		return "QUERY"
	}
	return strings.ToUpper(op)
}

// queryText is the statement's text with its whitespace folded, cut to maxQueryText.
func queryText(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > maxQueryText {
		s = s[:maxQueryText]
	}
	return s
}

// errCode is the SQLSTATE of a server's error, which names its kind and no value.
func errCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
