// A Google service-account key (the JSON file the Cloud console downloads), given inline as its JSON
// text or as a path to the file. Read once, asynchronously (no synchronous I/O), when first needed.
import { readFile } from 'node:fs/promises';

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
  project_id?: string;
}

export async function loadServiceAccountKey(source: string, providerName: string): Promise<ServiceAccountKey> {
  const trimmed = source.trim();
  let text = trimmed;
  if (!trimmed.startsWith('{')) {
    try {
      text = await readFile(trimmed, 'utf8');
    } catch (err) {
      throw new Error(`providers.${providerName}.serviceAccountKey: cannot read the key file (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
        cause: err,
      });
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // The message never includes the text: it holds a private key.
    throw new Error(`providers.${providerName}.serviceAccountKey is not valid JSON`, { cause: err });
  }
  const key = parsed as Partial<ServiceAccountKey> | null;
  if (!key || typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw new Error(`providers.${providerName}.serviceAccountKey needs client_email and private_key (a service-account key file)`);
  }
  return key as ServiceAccountKey;
}
