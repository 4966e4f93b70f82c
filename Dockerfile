# Multi-stage build: a static binary built with the Go toolchain, run on a small
# Alpine image as an unprivileged user.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so editing the source does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X otpgate/internal/server.Version=${VERSION}" -o /otpgate ./cmd/server

FROM alpine:3.22
# Alpine's base image already carries the CA bundle the Twilio sender needs for TLS.
RUN adduser -D -H -u 10001 otpgate
COPY --from=build /otpgate /otpgate
USER 10001:10001
# 8080: public API (OTP_HTTP_ADDR). 8081: admin (OTP_ADMIN_ADDR), which listens on
# 127.0.0.1 unless told otherwise; docker-compose.yml sets 0.0.0.0 and publishes it
# on the host's loopback only.
EXPOSE 8080 8081
# `serve` is the default command; `docker run IMAGE migrate` or `version` replaces it.
ENTRYPOINT ["/otpgate"]
CMD ["serve"]
