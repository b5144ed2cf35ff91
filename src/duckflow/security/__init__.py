"""Security: the sanitizer that masks secrets and PII before anything leaves the machine."""
