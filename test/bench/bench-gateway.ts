// A test gateway configured as the bench configures its gateway (providers, models, organizations
// and plugins of bench/gateway-config.ts) on the given store, against the bench upstream on `port`.
import { gatewayConfigDocument } from '../../bench/gateway-config';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

export function startBenchGateway(driver: 'embedded' | 'postgres', port: number): Promise<TestGateway> {
  const doc = gatewayConfigDocument('/unused', { plain: port, tls: null }, driver, null);
  return startTestGateway({
    driver,
    config: { providers: doc['providers'], models: doc['models'], organizations: doc['organizations'], plugins: doc['plugins'] },
  });
}
