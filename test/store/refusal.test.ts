// How each store tells a write it refuses from a failure that says nothing about the write
// (TurnRepository.refused): the turn writer fails a stored response's end only on a refusal, and keeps
// and retries it otherwise. The MongoDB classifier is checked here on the driver's own error types, as
// the contract suite runs against a MongoDB server only when MONGODB_URL is set.
import assert from 'node:assert/strict';
import { BSON, MongoInvalidArgumentError, MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { isMongoRefusal } from '../../src/store/mongo/refusal';
import { isSqlRefusal } from '../../src/store/sql/database';

const serverError = (code: number, errorLabels: string[] = []): MongoServerError =>
  new MongoServerError({ message: `code ${code}`, code, errmsg: `code ${code}`, errorLabels });

describe('store refusals', () => {
  it('MongoDB: duplicate keys, failed validation, oversized documents and bad values are refusals', () => {
    for (const code of [11000, 121, 10334, 17419, 2, 14, 52]) assert.equal(isMongoRefusal(serverError(code)), true, `code ${code}`);
  });

  it('MongoDB: an error the server labels retryable, a stepped-down primary, a timeout, a network error or no server selected are not', () => {
    assert.equal(isMongoRefusal(serverError(11000, ['TransientTransactionError'])), false);
    assert.equal(isMongoRefusal(serverError(2, ['RetryableWriteError'])), false);
    for (const code of [189, 10107, 11600, 50, 262, 91]) assert.equal(isMongoRefusal(serverError(code)), false, `code ${code}`);
    assert.equal(isMongoRefusal(new MongoNetworkError('connection reset')), false);
    assert.equal(
      isMongoRefusal(new MongoServerSelectionError('Server selection timed out after 30000 ms', { type: 'Unknown', servers: new Map() } as never)),
      false,
    );
    assert.equal(isMongoRefusal(new Error('anything else')), false);
  });

  it('MongoDB: a document the driver will not send is a refusal', () => {
    let err: unknown;
    try {
      BSON.serialize({ ['a\u0000b']: 1 });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error, 'BSON refuses a key with a NUL byte');
    assert.equal(isMongoRefusal(err), true, String(err));
    // What a bulk write answers for a document over the size limit, before anything is sent.
    assert.equal(isMongoRefusal(new MongoInvalidArgumentError('Document is larger than the maximum size 16777216')), true);
  });

  it('SQL: SQLSTATE classes 22, 23 and 42 are refusals; a cancel, a lost connection, a serialization failure or no SQLSTATE are not', () => {
    for (const code of ['22P02', '23505', '42P01', '42501']) assert.equal(isSqlRefusal(Object.assign(new Error(code), { code })), true, code);
    for (const code of ['57014', '57P01', '08006', '40001', '53300']) assert.equal(isSqlRefusal(Object.assign(new Error(code), { code })), false, code);
    assert.equal(isSqlRefusal(new Error('Query read timeout')), false);
  });
});
