"""The reply engine every strategy shares: context in, the seed's `SupportReply` out (scripted, or a chat endpoint
with a scripted fallback)."""
