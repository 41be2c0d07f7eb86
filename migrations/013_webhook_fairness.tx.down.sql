-- The categories of older attempts stay: the transport's text is not kept.
DROP TABLE webhook_leases;
