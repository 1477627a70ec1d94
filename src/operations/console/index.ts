import type { Handler } from '../types';
import { completeConsoleOidcLogin, createConsoleSession, deleteConsoleSession, getConsoleAuthConfig, startConsoleOidcLogin } from './auth';

export const consoleAuthHandlers: Readonly<Record<string, Handler>> = {
  getConsoleAuthConfig,
  startConsoleOidcLogin,
  completeConsoleOidcLogin,
  createConsoleSession,
  deleteConsoleSession,
};
