// Package natsbus carries remote runners' native lines over NATS
// JetStream: a [Publisher] sends the records of a runner's spool to its
// session's subject, idempotently and in order, and [Consume] feeds them
// durably to an ingester that writes them to the store; [ConsumeShared]
// does so as one of several nodes sharing one store, each taking the
// partitions whose lease it holds in the key-value bucket [LeaseBucket].
//
// Subjects and the stream are described in docs/cluster.md: one subject
// per session, agentstream.lines.PP.TOKEN, where PP is the session's
// partition ([Partition]) and TOKEN the session id with each "." written
// "~" ([Subject]); one stream, AGENTSTREAM_LINES, over agentstream.lines.>,
// on file storage ([EnsureStream]). A record larger than a message can
// hold is put in the object store [ObjectBucket] and the message carries
// its stub.
//
// A message is one or more consecutive records of the spool, exactly as
// the spool holds them, one per line: the header (which creates the
// session), {"line":…} records and the {"end":…} record. Its Nats-Msg-Id
// names its last record: SESSION/session, SESSION/stdout/N,
// SESSION/stderr/N or SESSION/end. Each message carries
// Nats-Expected-Last-Subject-Sequence, the stream sequence of the
// session's previous message (0 for the first), so that the stream takes
// a session's messages in the spool's order only: a publisher that comes
// back looks up the session's last message, resumes after the record it
// names, and a stale one (whose spool does not hold that record) is
// refused. Correctness does not rely on the stream's duplicate window.
//
// [StartNode] embeds a JetStream server in the process, alone or as one
// node of a cluster whose nodes replicate the stream ([StreamConfig]
// takes the number of replicas); serve --cluster runs one per process.
package natsbus
